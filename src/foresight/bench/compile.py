"""`foresight bench compile`: what `foresight cc` costs at build time.

Generated code must stay proportionate to the source; this suite makes its cost
visible.  Inputs: C files of many two-deep nests (gen_nests.py, one per `--lines`
size) and the programs shipped in benchmarks/nas and benchmarks/kernels.  For each
input, K times, alternately (noise hits all alike), four commands, each in a fresh
process measured by wait4 (wall time, user + system CPU, peak RSS):

  O            $FORESIGHT_CC -O2 -c SRC                     the plain compile
  P            foresight cc -O2 -c SRC                      what a build pays
  front end    FORESIGHT_CC=true foresight cc -O2 -c --emit-c DIR SRC
               foresight cc's own work (Python, libclang, the transformation)
               with an underlying compiler that does nothing; writes the text
               foresight cc compiles
  P's cc       $FORESIGHT_CC -O2 -c -iquote SRCDIR $(foresight config --cflags)
               DIR/SRC: the underlying compile of that text, as the driver runs it

(with the input's include directories).  Then the front end alone on larger generated
files (`--front-end-lines`, default 1,000, 10,000 and 20,000), K times each: its time
per 1,000 lines at each size says whether it stays linear, against the issue's 0.3 s
(gcc's own compile of texts that large would take minutes, so only the front end).
Peak RSS is wait4's ru_maxrss: the largest
single process of the run's tree (the maximum over the process and every descendant
it waited for), as /usr/bin/time's %M — for P, the larger of the Python front end and
cc1.  Object sizes are size(1)'s `text` (code and read-only data) of the `.o`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from foresight.bench import gen_nests, suite
from foresight.bench.common import foresight_exe, pyplot
from foresight.bench.compiler import KERNELS as KERNEL_PROGRAMS
from foresight.bench.compiler import kernels_dir
from foresight.bench.nas import KERNELS as NAS_PROGRAMS
from foresight.bench.nas import nas_dir
from foresight.bench.tables import Table
from foresight.driver.outputs import under_directory
from foresight.errors import BenchError, UsageError
from foresight.harness import environment
from foresight.reports import save_figure
from foresight.units import format_size

DEFAULT_LINES = (250, 1000, 2000)
DEFAULT_FRONT_END_LINES = (1000, 10000, 20000)
FRONT_END_TARGET = 0.3      # seconds of front end per 1,000 lines (issue 26 section 4)
SEED = 1
VARIANTS = ("O", "P", "front_end", "underlying")
LABELS = {"O": "O (cc)", "P": "P (foresight cc)", "front_end": "P front end",
          "underlying": "P's cc"}


@dataclass
class Input:
    name: str                     # nests-1000, nas/cg, kernels/gather
    kind: str                     # generated, nas, kernels
    src: Path
    includes: list[str] = field(default_factory=list)
    nests: int | None = None      # generated files: how many nests ...
    lines: int | None = None      # ... and the --lines they were made with


class Failed(Exception):
    """One measurement failed (exit status, timeout): the input's row says why."""


def programs() -> dict[str, tuple[str, Path, list[str]]]:
    """The shipped programs by name: (kind, source, include flags)."""
    out: dict[str, tuple[str, Path, list[str]]] = {}
    nd = nas_dir()
    for n in NAS_PROGRAMS:
        out[n] = ("nas", nd / f"{n}.c", [f"-I{nd}"])
    kd = kernels_dir()
    for n in KERNEL_PROGRAMS:
        out[n] = ("kernels", kd / f"{n}.c", [])
    return out


def parse_lines(text: str, option: str = "--lines") -> list[int]:
    """--lines (or OPTION): comma-separated sizes of the generated files, or `none`."""
    if text.strip().lower() == "none":
        return []
    if not any(w.strip() for w in text.split(",")):
        raise UsageError(f"{option} {text!r}: no line counts (e.g. {option} 250,1000 or "
                         f"{option} none)")
    sizes = []
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        try:
            n = int(word.replace("_", ""))
        except ValueError:
            raise UsageError(f"{option} {text!r}: {word!r} is not a number of lines "
                             f"(e.g. {option} 250,1000 or {option} none)") from None
        if n < gen_nests.MIN_LINES:
            raise UsageError(f"{option} {text!r}: a generated file has at least "
                             f"{gen_nests.MIN_LINES} lines, not {n}")
        sizes.append(n)
    return list(dict.fromkeys(sizes))   # each size once


def parse_programs(text: str | None) -> list[str]:
    """--kernels: comma-separated shipped programs (default all), or `none`."""
    known = programs()
    if text is None:
        return list(known)
    if text.strip().lower() == "none":
        return []
    names = []
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        kind, _, name = word.rpartition("/")   # cg or nas/cg, as the table names it
        if name not in known or kind not in ("", known[name][0]):
            raise UsageError(f"unknown program {word!r} (choose from {', '.join(known)}, "
                             "or none)")
        names.append(name)
    return list(dict.fromkeys(names))


def size_text(obj: Path) -> int:
    """size(1)'s `text` of an object file."""
    exe = shutil.which("size")
    if exe is None:
        raise BenchError("`size` (binutils) is not installed; it reads the objects' text size")
    r = subprocess.run([exe, str(obj)], capture_output=True, text=True)
    lines = r.stdout.split("\n")
    if r.returncode != 0 or len(lines) < 2 or "text" not in lines[0].split():
        raise BenchError(f"size {obj} failed: {(r.stderr or r.stdout).strip()}")
    return int(lines[1].split()[lines[0].split().index("text")])


def measure(cmd: list[str], env: dict[str, str], log: Path, timeout: float) -> dict:
    """Run CMD in its own process group; its wall time, CPU and peak RSS (wait4).  Its
    temporary files go beside LOG (TMPDIR), in the suite's scratch directory: a compile
    stopped by the timeout (SIGKILL) cannot remove its own."""
    with open(log, "wb") as err:
        start = time.perf_counter()
        p = subprocess.Popen(cmd, env={**env, "TMPDIR": str(log.parent)},
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                             start_new_session=True)
        lock = threading.Lock()
        state = {"reaped": False, "timed_out": False}

        def stop(why: str) -> None:
            # Only while the group leader is unreaped: its id cannot have been reused.
            with lock:
                if not state["reaped"]:
                    state[why] = True
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass

        timer = threading.Timer(timeout, stop, ("timed_out",))
        timer.start()
        try:
            try:
                _, status, ru = os.wait4(p.pid, 0)
            except BaseException:   # Ctrl-C: the compiler is in its own session, stop it
                stop("interrupted")
                with contextlib.suppress(ChildProcessError):
                    os.wait4(p.pid, 0)
                raise
            finally:
                with lock:
                    state["reaped"] = True
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    if state["timed_out"]:
        raise Failed(f"timed out after {timeout:g} s (--timeout): {shlex.join(cmd)}")
    if p.returncode != 0:
        text = log.read_text(errors="replace").strip()
        raise Failed(f"exit {p.returncode}: {shlex.join(cmd)}\n{text}")
    return {"wall_seconds": wall, "cpu_seconds": ru.ru_utime + ru.ru_stime,
            "max_rss_bytes": ru.ru_maxrss * 1024}


def commands(inp: Input, cc: list[str], cflags: list[str], tmp: Path) -> dict[str, list[str]]:
    emit = tmp / "emit"
    return {
        "O": [*cc, "-O2", "-c", *inp.includes, str(inp.src), "-o", str(tmp / "O.o")],
        "P": [foresight_exe(), "cc", "-O2", "-c", *inp.includes, str(inp.src),
              "-o", str(tmp / "P.o")],
        "front_end": [foresight_exe(), "cc", "-O2", "-c", *inp.includes, "--emit-c",
                      str(emit), str(inp.src), "-o", str(tmp / "front_end.o")],
        "underlying": [*cc, "-O2", "-c", *inp.includes, "-iquote", str(inp.src.parent),
                       *cflags, str(under_directory(emit, str(inp.src))), "-o",
                       str(tmp / "underlying.o")],
    }


def measure_input(inp: Input, cc: list[str], cflags: list[str], repeat: int, timeout: float,
                  tmp: Path, step) -> dict:
    src_bytes = inp.src.read_bytes()
    row: dict = {"input": inp.name, "kind": inp.kind, "source": str(inp.src),
                 "source_lines": src_bytes.count(b"\n"), "source_bytes": len(src_bytes)}
    if inp.nests is not None:   # a temporary file: say how to make it again
        row.update(made_by=f"python -m foresight.bench.gen_nests --lines {inp.lines} "
                   f"--seed {SEED}", nests=inp.nests, seed=SEED)
    work = tmp / inp.name.replace("/", "-")
    work.mkdir()
    cmds = commands(inp, cc, cflags, work)
    row["commands"] = cmds
    env = dict(os.environ)
    envs = {v: env for v in VARIANTS}
    envs["front_end"] = {**env, "FORESIGHT_CC": "true"}
    runs: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    generated: set[int] = set()
    warnings: list[str] = []
    try:
        for k in range(repeat):
            for v in VARIANTS:
                step(f"{inp.name} {LABELS[v]} ({k + 1}/{repeat})")
                log = work / f"{v}.log"
                r = measure(cmds[v], envs[v], log, timeout)
                if v in ("O", "P", "underlying"):
                    obj = Path(cmds[v][-1])
                    r["object_bytes"] = obj.stat().st_size
                    r["object_text_bytes"] = size_text(obj)
                    obj.unlink()
                if v == "front_end":
                    emitted = under_directory(work / "emit", str(inp.src))
                    if not emitted.is_file():
                        raise Failed(f"foresight cc --emit-c wrote no {emitted}")
                    generated.add(emitted.stat().st_size)
                if v == "P" and k == 0:
                    warnings = [line for line in log.read_text(errors="replace").splitlines()
                                if "foresight" in line and "warning" in line]
                runs[v].append(r)
    except Failed as e:
        row["problem"] = str(e)
        return row
    if len(generated) != 1:
        row["problem"] = f"--emit-c wrote texts of different sizes: {sorted(generated)}"
        return row
    row["generated_bytes"] = generated.pop()
    for v in VARIANTS:
        row[v] = summary(runs[v])
    o, p = row["O"], row["P"]
    row["ratios"] = {
        "generated_over_source": row["generated_bytes"] / row["source_bytes"],
        "time": p["wall_seconds"] / o["wall_seconds"],
        "memory": p["max_rss_bytes"] / o["max_rss_bytes"],
        "object_text": p["object_text_bytes"] / o["object_text_bytes"]
        if o["object_text_bytes"] else None,
    }
    row["front_end_share"] = row["front_end"]["wall_seconds"] / p["wall_seconds"]
    # P's object is the emitted text compiled (else the driver fell back to the original).
    row["underlying_matches"] = (row["underlying"]["object_text_bytes"]
                                 == p["object_text_bytes"])
    row["warnings"] = warnings
    return row


MEASURES = ("wall_seconds", "cpu_seconds", "max_rss_bytes", "object_bytes",
            "object_text_bytes")


def summary(runs: list[dict]) -> dict:
    """Medians of each measurement, and the runs."""
    out: dict = {k: statistics.median(r[k] for r in runs) for k in MEASURES if k in runs[0]}
    for k in ("max_rss_bytes", "object_bytes", "object_text_bytes"):
        if k in out:
            out[k] = int(out[k])
    out["runs"] = runs
    return out


def compiler_version(cc: list[str]) -> str:
    try:
        r = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise BenchError(f"cannot run the C compiler {shlex.join(cc)} (FORESIGHT_CC): "
                         f"{e}") from None
    first = (r.stdout or r.stderr).strip().splitlines()
    return first[0] if first else "unknown"


def inputs(lines: list[int], names: list[str], tmp: Path) -> list[Input]:
    out = []
    gen = tmp / "generated"
    gen.mkdir()
    for n in lines:
        text, nests = gen_nests.generate(n, SEED)
        d = gen / str(n)
        d.mkdir(exist_ok=True)
        src = d / f"nests{n}.c"
        src.write_text(text)
        out.append(Input(f"nests-{n}", "generated", src, nests=nests, lines=n))
    known = programs()
    for n in names:
        kind, src, includes = known[n]
        if not src.is_file():
            raise BenchError(f"{src} is missing; run `make setup`")
        out.append(Input(f"{kind}/{n}", kind, src, includes))
    return out


def front_end_scaling(sizes: list[int], repeat: int, timeout: float, tmp: Path,
                      step) -> list[dict]:
    """The front end alone (FORESIGHT_CC=true foresight cc -O2 -c, no --emit-c) on a
    generated file of each size, REPEAT times: wall and CPU medians, per 1,000 lines."""
    out = []
    env = {**os.environ, "FORESIGHT_CC": "true"}
    for n in sizes:
        text, nests = gen_nests.generate(n, SEED)
        d = tmp / "front-end" / str(n)
        d.mkdir(parents=True)
        src = d / f"nests{n}.c"
        src.write_text(text)
        cmd = [foresight_exe(), "cc", "-O2", "-c", str(src), "-o", str(d / "x.o")]
        row: dict = {"lines": text.count("\n"), "nests": nests,
                     "made_by": f"python -m foresight.bench.gen_nests --lines {n} --seed {SEED}"}
        runs = []
        try:
            for k in range(repeat):
                step(f"front end, {n:,} lines ({k + 1}/{repeat})")
                runs.append(measure(cmd, env, d / "log", timeout))
        except Failed as e:
            row["problem"] = str(e)
            out.append(row)
            continue
        wall = statistics.median(r["wall_seconds"] for r in runs)
        row.update(wall_seconds=wall, cpu_seconds=statistics.median(r["cpu_seconds"]
                                                                    for r in runs),
                   per_1000_lines=wall * 1000 / row["lines"], runs=runs)
        out.append(row)
    return out


def compile_suite(lines: list[int], names: list[str], repeat: int, timeout: float,
                  front_end_lines: list[int] = ()) -> dict:
    from rich.progress import Progress

    from foresight.driver.compile import runtime_cflags, underlying_words

    cc = underlying_words()
    cflags = runtime_cflags()
    version = compiler_version(cc)
    env = environment.environment(None)
    env["load_average_start"] = list(os.getloadavg())
    rows = []
    with tempfile.TemporaryDirectory(prefix="foresight-compile-") as tmpname:
        tmp = Path(tmpname)
        todo = inputs(lines, names, tmp)
        with Progress(transient=True) as bar:
            task = bar.add_task("foresight bench compile",
                                total=(len(todo) * 4 + len(front_end_lines)) * repeat)

            def step(what: str) -> None:
                bar.update(task, advance=1, description=f"compile: {what}")

            for inp in todo:
                rows.append(measure_input(inp, cc, cflags, repeat, timeout, tmp, step))
            scaling = front_end_scaling(list(front_end_lines), repeat, timeout, tmp, step)
    env["load_average_end"] = list(os.getloadavg())
    return {"suite": "compile", "repeat": repeat, "lines": lines, "seed": SEED,
            "front_end_lines": list(front_end_lines), "front_end_scaling": scaling,
            "front_end_target_per_1000_lines": FRONT_END_TARGET,
            "timeout_seconds": timeout, "compiler": cc, "compiler_version": version,
            "runtime_cflags": cflags, "rows": rows, "environment": env}


def _s(x: float) -> str:
    return f"{x:.2f} s" if x < 100 else f"{x:.0f} s"


def _x(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}×"


class Compile(suite.Suite):
    name = "compile"
    help = "what foresight cc costs at build time: time, memory, code size against cc"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--lines", default=None,
                            help="line counts of the generated many-nest files, "
                            "comma-separated, or none (default "
                            f"{','.join(map(str, DEFAULT_LINES))})")
        parser.add_argument("--kernels", default=None, metavar="A,B",
                            help="the shipped programs to compile, comma-separated: any of "
                            "bench nas' and bench compiler's (cg or nas/cg), or none "
                            "(default all)")
        parser.add_argument("--front-end-lines", default=None, metavar="N,N",
                            help="line counts of the generated files the front end alone "
                            "runs on, comma-separated, or none (default "
                            f"{','.join(map(str, DEFAULT_FRONT_END_LINES))})")
        suite.add_timeout(parser)

    def measure(self, ns: argparse.Namespace) -> dict:
        lines = parse_lines(ns.lines) if ns.lines is not None else list(DEFAULT_LINES)
        names = parse_programs(ns.kernels)
        front = (parse_lines(ns.front_end_lines, "--front-end-lines")
                 if ns.front_end_lines is not None else list(DEFAULT_FRONT_END_LINES))
        if not lines and not names and not front:
            raise UsageError("nothing to measure: --lines none, --kernels none and "
                             "--front-end-lines none")
        return compile_suite(lines, names, ns.repeat, ns.timeout, front)

    def tables(self, res: dict) -> list[Table]:
        rows = []
        for r in res["rows"]:
            if "problem" in r:
                rows.append((r["input"], f"{r['source_lines']:,}",
                             format_size(r["source_bytes"]),
                             "failed: " + r["problem"].splitlines()[0]))
                continue
            o, p, f, u, q = r["O"], r["P"], r["front_end"], r["underlying"], r["ratios"]
            rows.append((r["input"], f"{r['source_lines']:,}", format_size(r["source_bytes"]),
                         format_size(r["generated_bytes"]), _s(o["wall_seconds"]),
                         _s(p["wall_seconds"]), _x(q["time"]), _s(f["wall_seconds"]),
                         _s(u["wall_seconds"]), format_size(o["max_rss_bytes"]),
                         format_size(p["max_rss_bytes"]), _x(q["memory"]),
                         format_size(o["object_text_bytes"]),
                         format_size(p["object_text_bytes"]), _x(q["object_text"])))
        out = [Table(f"foresight bench compile: -O2 -c, median of {res['repeat']}",
                     ("input", "lines", "source", "generated", "O time", "P time",
                      "P/O time", "P front end", "P's cc", "O RSS", "P RSS", "P/O RSS",
                      "O text", "P text", "P/O text"), rows, left=("input",))] if rows else []
        scaling = res.get("front_end_scaling") or []
        if scaling:
            target = res["front_end_target_per_1000_lines"]
            srows = []
            for r in scaling:
                if "problem" in r:
                    srows.append((f"{r['lines']:,}", f"{r['nests']:,}", "failed", "", ""))
                    continue
                srows.append((f"{r['lines']:,}", f"{r['nests']:,}", _s(r["wall_seconds"]),
                              _s(r["cpu_seconds"]), f"{r['per_1000_lines']:.2f} s"))
            out.append(Table(f"the front end alone (FORESIGHT_CC=true foresight cc -O2 -c) "
                             f"on generated files, median of {res['repeat']}; target "
                             f"{target} s per 1,000 lines",
                             ("lines", "nests", "wall", "CPU", "per 1,000 lines"), srows))
        return out

    def notes(self, res: dict) -> list[str]:
        env = res["environment"]
        start, end = env["load_average_start"], env["load_average_end"]
        out = [f"{res['compiler_version']} (as {shlex.join(res['compiler'])}); kernel "
               f"{env['kernel']}, {env['cpus']} CPUs, load average {start[0]:.2f} at the "
               f"start and {end[0]:.2f} at the end (the suite's own compiles add about 1)"
               + environment.settings_text(env),
               "time: wall; RSS: peak of the largest process of the run; P front end: "
               "foresight cc with FORESIGHT_CC=true; P's cc: its --emit-c text compiled as "
               "the driver does; text: size(1) of the .o"]
        for r in res["rows"]:
            if "problem" in r:
                out.append(f"{r['input']}: {r['problem']}")
                continue
            if not r["underlying_matches"]:
                out.append(f"{r['input']}: P's object text differs from the --emit-c text's "
                           "compiled alone (did foresight cc fall back to the original?)")
            out += [f"{r['input']}: {w}" for w in r["warnings"]]
        for r in res.get("front_end_scaling") or []:
            if "problem" in r:
                out.append(f"front end, {r['lines']:,} lines: {r['problem'].splitlines()[0]}"
                           " (not in the plot)")
        return out

    def plot(self, res: dict, directory: str) -> list[str]:
        plt = pyplot()
        files = []
        scaling = sorted((r for r in res.get("front_end_scaling") or [] if "problem" not in r),
                         key=lambda r: r["lines"])
        if scaling:
            fig, ax = plt.subplots(figsize=(5, 3.4))
            ax.plot([r["lines"] for r in scaling], [r["per_1000_lines"] for r in scaling],
                    marker="o", label="front end")
            ax.axhline(res["front_end_target_per_1000_lines"], color="tab:red",
                       linestyle="--", label="target")
            ax.set_xscale("log")
            ax.set_ylim(bottom=0)
            ax.set_xlabel("lines of the generated file")
            ax.set_ylabel("seconds per 1,000 lines")
            ax.legend(fontsize=7)
            ax.set_title(f"foresight cc's front end, median of {res['repeat']}", fontsize=9)
            files.append(save_figure(fig, directory, "compile-front-end.png"))
        rows = [r for r in res["rows"] if "ratios" in r]
        if not rows:
            return files
        fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(rows)), 3.8))
        x = range(len(rows))
        for j, (key, label, color) in enumerate((
                ("time", "compile time", "tab:blue"), ("memory", "peak RSS", "tab:orange"),
                ("object_text", "object text", "tab:green"),
                ("generated_over_source", "C text", "tab:gray"))):
            ax.bar([i + (j - 1.5) * 0.2 for i in x],
                   [r["ratios"][key] or 0 for r in rows], 0.2, label=label, color=color)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(list(x), [r["input"] for r in rows], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("foresight cc / cc (log)")
        ax.legend(fontsize=7)
        ax.set_title(f"foresight cc -O2 -c against cc -O2 -c, median of {res['repeat']}",
                     fontsize=9)
        return [*files, save_figure(fig, directory, "compile-ratios.png")]

    def exit_code(self, res: dict) -> int:
        return 1 if any("problem" in r for r in [*res["rows"],
                                                 *(res.get("front_end_scaling") or [])]) else 0


SUITE = Compile()
