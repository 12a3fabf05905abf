"""Traced runs: `foresight cc --trace-mem` (clang's load and store callbacks, recorded by
runtime/src/memtrace.c) and `foresight cachesim -- PROG`.  The trace holds the program's
own accesses, a record per line a thread touches in a row, each thread's CPU its index in
its OpenMP team, a barrier after each parallel region and each serial stretch; the traced
build prints what the plain one prints; what goes wrong is said in one line."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

FORESIGHT = [sys.executable, "-m", "foresight.cli"]
N = 8192                     # doubles: 64 KiB, 1,024 lines of 64 bytes
THREADS = 4

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#define N @N@
static double a[N];
int main(int argc, char **argv)
{
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++)
        a[i] = i * 0.5;
    double s = 0;
    for (int i = 0; i < N; i++)
        s += a[i];
    if (argc > 1) {          /* where a is, for the test (not printed: outputs compare) */
        FILE *f = fopen(argv[1], "w");
        fprintf(f, "%lu %lu\n", (unsigned long)a, (unsigned long)(a + N));
        fclose(f);
    }
    if (getenv("FORK_TOO")) {
        /* the parent's buffer spilled to its file first, then more records than a
         * buffer holds in the child: were the child recording, they would reach its
         * parent's file before the parent writes its trace; _exit: libomp 16 cannot
         * exit a child */
        static double b[N];
        for (int r = 0; r < 100; r++)
            for (int i = 0; i < N; i++)
                b[i] = b[i] * 0.5 + r;
        if (b[1] > 1e9)
            return 1;
        pid_t pid = fork();
        if (pid == 0) {
            for (int r = 0; r < 100; r++)
                for (int i = 0; i < N; i++)
                    a[i] = a[i] * 0.5 + r;
            _exit(a[1] > 1e9);
        }
        waitpid(pid, NULL, 0);
    }
    printf("sum %.1f\n", s);
    return 0;
}
""".replace("@N@", str(N))


def foresight(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*FORESIGHT, *args], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("traced")
    (d / "p.c").write_text(PROGRAM)
    p = foresight("cc", "--trace-mem", "-O2", "-fopenmp", "-Wall", "-Werror", "p.c", "-o",
                  "traced", cwd=d)
    assert p.returncode == 0, p.stderr
    plain = subprocess.run(["cc", "-O2", "-fopenmp", "p.c", "-o", "plain"], cwd=d,
                           capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
    return d


def records(path: Path) -> list[tuple[int, int, int, int]]:
    data = path.read_bytes()
    assert data[:8] == b"FSCTRC1\n"
    assert (len(data) - 8) % 16 == 0
    return [struct.unpack_from("<QIHBx", data, off) for off in range(8, len(data), 16)]


def run(d: Path, exe: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(d / exe), *args], cwd=d, capture_output=True, text=True,
                          env={**os.environ, "OMP_NUM_THREADS": str(THREADS), **env})


def test_the_traced_build_prints_what_the_plain_one_prints(built):
    plain = run(built, "plain")
    for env in ({}, {"FORESIGHT_TRACE_MEM": str(built / "t.trace")}):
        got = run(built, "traced", **env)
        assert (got.returncode, got.stdout, got.stderr) == (0, plain.stdout, ""), env


def test_the_trace_holds_each_threads_lines_and_the_barriers(built):
    trace, where = built / "lines.trace", built / "where"
    assert run(built, "traced", str(where), FORESIGHT_TRACE_MEM=str(trace)).returncode == 0
    lo, hi = map(int, where.read_text().split())
    recs = records(trace)
    in_a = [(addr, cpu, op) for addr, size, cpu, op in recs if lo <= addr < hi and op < 2]
    writes = [(addr, cpu) for addr, cpu, op in in_a if op == 1]
    reads = [(addr, cpu) for addr, cpu, op in in_a if op == 0]
    lines = (hi - lo) // 64 + ((lo % 64) != 0)
    # one write record per line each thread stores to, each line by one thread: libomp's
    # static schedule deals contiguous blocks, so each CPU's lines are one run
    assert len({a >> 6 for a, _ in writes}) == lines
    assert len(writes) <= lines + THREADS
    assert {cpu for _, cpu in writes} == set(range(THREADS))
    for cpu in range(THREADS):
        mine = sorted(a >> 6 for a, c in writes if c == cpu)
        assert mine == list(range(mine[0], mine[0] + len(mine))), cpu
    # the serial sum: every line read once, by CPU 0
    assert {cpu for _, cpu in reads} == {0}
    assert len(reads) == lines
    # the writes come before the barrier that ends the region, the reads after it
    first_read = next(i for i, r in enumerate(recs) if lo <= r[0] < hi and r[3] == 0)
    last_write = max(i for i, r in enumerate(recs) if lo <= r[0] < hi and r[3] == 1)
    assert any(r[3] == 2 for r in recs[last_write:first_read])


def test_a_forked_child_records_nothing(built):
    trace, where = built / "fork.trace", built / "where-fork"
    plain = run(built, "traced", str(where), FORESIGHT_TRACE_MEM=str(trace))
    forked = run(built, "traced", str(where), FORESIGHT_TRACE_MEM=str(trace), FORK_TOO="1")
    assert forked.returncode == 0 and forked.stderr == ""
    # the parent's trace, whole: none of the child's 100 passes over a are in it
    assert plain.returncode == 0
    lo, hi = map(int, where.read_text().split())
    recs = [r for r in records(trace) if lo <= r[0] < hi]
    assert sum(1 for r in recs if r[3] == 1) <= (hi - lo) // 64 + 1 + THREADS
    assert not list(built.glob("fork.trace.*"))


def test_an_unwritable_trace_is_said_once_and_the_program_goes_on(built):
    got = run(built, "traced", FORESIGHT_TRACE_MEM="/nonexistent-dir/t.trace")
    assert got.returncode == 0 and got.stdout == run(built, "plain").stdout
    assert got.stderr.count("\n") == 1 and "FORESIGHT_TRACE_MEM=/nonexistent-dir/t.trace" \
        in got.stderr and "not written" in got.stderr


def test_cachesim_runs_the_program_and_replays_its_trace(built):
    p = foresight("cachesim", "--cpus", str(THREADS), "--preset", "sgi", "--json", "out.json",
                  "--", "./traced", cwd=built)
    assert p.returncode == 0, p.stderr
    assert p.stdout == run(built, "plain").stdout     # the program's own output
    r = json.loads((built / "out.json").read_text())
    assert r["barriers"] >= 2 and r["accesses"] >= 2 * (N * 8 // 64)
    assert [c["cpu"] for c in r["per_cpu"] if c["accesses"]] == list(range(THREADS))
    assert not list(Path(tempfile.gettempdir()).glob("foresight-cachesim-*/trace"))


def test_cachesim_says_what_is_wrong_in_one_line(built):
    marker = built / "ran"
    cases = [
        (["--cpus", "4", "--preset", "sgi", "--"], "must be followed by the program"),
        (["--cpus", "4", "--preset", "sgi", "--trace", "x", "--", "./traced"],
         "--trace and `-- PROG` both"),
        (["--preset", "sgi", "--", "./traced"], "--cpus N is needed"),
        # options are checked before the program runs: it must not have run
        (["--cpus", "4", "--preset", "nope", "--", "sh", "-c", f"touch {marker}"],
         "unknown --preset 'nope'"),
        (["--cpus", "4", "--preset", "sgi", "--", "./plain"], "wrote no trace"),
        (["--cpus", "4", "--preset", "sgi", "--policy", "cdpc", "--", "./traced"],
         "wrote no color map"),
        (["--cpus", "4", "--preset", "sgi", "--", "./no-such-program"], "cannot run"),
        (["--cpus", "4", "--preset", "sgi", "--", "sh", "-c", "exit 3"],
         "exited with status 3"),
    ]
    for args, message in cases:
        p = foresight("cachesim", *args, cwd=built)
        assert p.returncode != 0, args
        assert message in p.stderr and p.stderr.count("\n") == 1, (args, p.stderr)
        assert "Traceback" not in p.stderr
    assert not marker.exists()


def test_trace_mem_without_clang_is_one_clear_error(built, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "FORESIGHT_CC"}
    env["PATH"] = str(tmp_path)      # no clang (nor cc) to be found
    p = subprocess.run([*FORESIGHT, "cc", "--trace-mem", "-c", str(built / "p.c"), "-o",
                        str(tmp_path / "p.o")], capture_output=True, text=True, env=env)
    assert p.returncode != 0 and "clang 16 or later" in p.stderr
    assert p.stderr.count("\n") == 1 and not (tmp_path / "p.o").exists()


# Two arrays whose equal elements share a set of a 1 MiB direct-mapped cache under page
# coloring (b starts 1 MiB - 8 bytes after a), read side by side a row per iteration.
PING_PONG = r"""
#include <stdio.h>
#include <stdlib.h>
#define ROWS 64
#define COLS 512
static double pool[(1 << 17) + ROWS * COLS];
int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 2;
    double (*a)[COLS] = (double (*)[COLS])pool;
    double (*b)[COLS] = (double (*)[COLS])(pool + (1 << 17) - 1);
    static double s[ROWS];
    #pragma omp parallel for
    for (int j = 0; j < ROWS; j++)
        for (int i = 0; i < COLS; i++) {
            a[j][i] = i + j;
            b[j][i] = i - j;
        }
    for (int t = 0; t < steps; t++) {
        #pragma omp parallel for
        for (int j = 0; j < ROWS; j++) {
            double x = 0;
            for (int i = 0; i < COLS; i++)
                x += a[j][i] * b[j][i];
            s[j] += x;
        }
    }
    double sum = 0;
    for (int j = 0; j < ROWS; j++)
        sum += s[j];
    printf("%.1f\n", sum);
    return 0;
}
"""


def test_the_model_of_the_map_matches_the_traced_program(tmp_path):
    # The "generated vs traced misses within 3%": the model of the program's map
    # (each reference's walk, element by element) against its own trace, steady state
    # (a run of 3 time steps less a run of 1) against 2 model steps.  a and b evict
    # each other at every element; a line-by-line walk (the map without its `access`
    # records) sees one miss a line, a sixteenth of them.
    (tmp_path / "pp.c").write_text(PING_PONG)
    p = foresight("cc", "--trace-mem", "--color", "--no-prefetch", "-O2", "-fopenmp",
                  "pp.c", "-o", "pp", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    traced = 0
    for steps, sign in (("3", 1), ("1", -1)):
        trace = tmp_path / f"t{steps}"
        assert run(tmp_path, "pp", steps, FORESIGHT_TRACE_MEM=str(trace), FORESIGHT_COLOR="sim",
                   FORESIGHT_COLOR_MAP=str(tmp_path / f"m{steps}.map")).returncode == 0
        r = foresight("cachesim", "--cpus", str(THREADS), "--preset", "sgi", "--policy", "pc",
                      "--trace", str(trace), cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        traced += sign * json.loads(r.stdout)["misses"]["total"]
    text = (tmp_path / "m3.map").read_text()
    (tmp_path / "lines.map").write_text("".join(ln for ln in text.splitlines(True)
                                                if not ln.startswith("access ")))
    modelled = {}
    for m in ("m3.map", "lines.map"):
        r = foresight("cachesim", "--cpus", str(THREADS), "--preset", "sgi", "--policy", "pc",
                      "--map", m, "--model", "2", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        modelled[m] = json.loads(r.stdout)["misses"]["total"]
    assert traced > 2 * 2 * 64 * 512 * 0.9          # about a miss per element of a and b
    assert abs(modelled["m3.map"] - traced) <= 0.03 * traced, (modelled, traced)
    assert modelled["lines.map"] < traced / 8
