"""foresight cc --color (paper 4, compiler-directed page coloring): summaries of static
OpenMP loops passed to the runtime before each loop.  The programs print what the
originals print with 1-3 threads; under FORESIGHT_COLOR=sim the map holds the
partitions the loops make (schedules, reversal, shifts, stores, thread counts); what
cannot be summarised is left unchanged and said in --report."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#define N 300
static double x[N][N], y[N][N], rx[N][N];
static int idx[N];

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : N, t = 2;
    (void)t;
    double (*w)[n] = malloc(sizeof(double) * (size_t)n * (size_t)n);
    for (int k = 0; k < n; k++)
        idx[k] = (k * 7) % n;
    #pragma omp parallel for
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            x[j][i] = i + 2 * j;
            y[j][i] = i - j;
            w[j][i] = 1.0 / (1 + i + j);
        }
    for (int it = 0; it < 3; it++) {
        #pragma omp parallel for schedule(static)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++)
                rx[j][i] = x[j + 1][i] - x[j - 1][i] + y[j][i + 1] * w[j][i];
        #pragma omp parallel for schedule(static, 4)
        for (int j = n - 2; j >= 1; j--)
            for (int i = 1; i < n - 1; i++)
                x[j][i] += 0.25 * rx[j][i];
        if (argc > 2)
            #pragma omp parallel for num_threads(t)
            for (int j = 0; j < n; j++)
                y[n - 1 - j][0] += x[j][1];
        #pragma omp parallel
        {
            #pragma omp for
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++)
                    w[j][i] *= 0.5;
        }
        #pragma omp parallel for schedule(dynamic)
        for (int j = 0; j < n; j++)
            y[j][2] += 1;
        #pragma omp parallel for
        for (int j = 0; j < n; j++)
            y[idx[j]][3] += 1;
        #pragma omp parallel for collapse(2)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++)
                rx[j][i] *= 0.5;
    }
    double s = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            s += x[j][i] + y[j][i] + rx[j][i] + w[j][i];
    printf("%.6f\n", s);
    free(w);
    return 0;
}
"""


def build(tmp: Path, *flags: str, color: bool = True) -> Path:
    (tmp / "p.c").write_text(PROGRAM)
    out = tmp / ("pc" if color else "po")
    cmd = [FORESIGHT, "cc", "--color"] if color else ["cc"]
    p = subprocess.run([*cmd, "-O2", "-Wall", "-Wextra", "-Werror", *flags, "p.c", "-o",
                        str(out)], cwd=tmp, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out


def run(prog: Path, *args: str, threads: int = 1, **env: str) -> str:
    e = {**os.environ, "OMP_NUM_THREADS": str(threads), **env}
    return subprocess.run([str(prog), *args], env=e, capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.parametrize("args", [(), ("300", "x")])
def test_output_unchanged_with_summaries(tmp_path, args):
    plain = build(tmp_path, "-fopenmp", color=False)
    colored = build(tmp_path, "-fopenmp")
    for threads in (1, 2, 3):
        want = run(plain, *args, threads=threads)
        assert run(colored, *args, threads=threads) == want
        assert run(colored, *args, threads=threads, FORESIGHT_COLOR="sim",
                   FORESIGHT_COLOR_MAP=str(tmp_path / "m.map")) == want


def read_map(path: Path) -> tuple[dict[int, int], list[list[str]], list[str]]:
    arrays, refs, runs = {}, [], []
    for line in path.read_text().splitlines():
        f = line.split()
        if f[0] == "array":   # declared by every loop: the largest extent counts
            arrays[int(f[1], 16)] = max(int(f[2]), arrays.get(int(f[1], 16), 0))
        elif f[0] == "ref":
            refs.append(f[1:])
        elif f[0] == "run":
            runs.append(line)
    return arrays, refs, runs


def test_map_holds_the_loops_partitions(tmp_path):
    prog = build(tmp_path, "-fopenmp")
    m = tmp_path / "p.map"
    run(prog, "300", "x", threads=3, FORESIGHT_COLOR="sim", FORESIGHT_COLOR_MAP=str(m),
        FORESIGHT_COLOR_CACHE="1M,1")
    arrays, refs, runs = read_map(m)
    row = 300 * 8
    # x, y, rx (static, whole), w (malloc'd: its extent from the loops, 300 rows), idx
    assert sorted(arrays.values()) == [300 * 4] + [300 * row] * 4
    by = {}
    for r in refs:
        base, unit, first, count, off, chunk, sched, p, loop, wrap, access, _call, _again = r
        by.setdefault(loop, []).append((int(base, 16), int(unit), int(first), int(count),
                                        int(off), int(chunk), sched, int(p), access))
    loops = list(by.values())
    # the first loop: three stores, even partition of 300 rows over 3 threads (libgomp)
    init = loops[0]
    assert {(u, f, c, o, s, p, a) for _, u, f, c, o, _, s, p, a in init} == \
        {(row, 0, 300, 0, "even", 3, "w")}
    # the stencil: rx stored, x read with shifts of +1 and -1
    sten = next(lp for lp in loops if any(o == 1 for *_, o, _c, _s, _p, _a in
                                          [(b, u, f, c, o, ch, s, p, a) for
                                           b, u, f, c, o, ch, s, p, a in lp]))
    assert sorted((o, a) for _, _, f, c, o, _, _, _, a in sten if f == 1 and c == 298) == \
        [(-1, "r"), (0, "r"), (0, "r"), (0, "w"), (1, "r")]
    # the countdown loop with chunks of 4: cyclic, reversed
    assert any(s == "cyclic-reverse" and ch == 4 and f == 1 and c == 298
               for _, _, f, c, _, ch, s, _, _ in sum(loops, []))
    # y[n - 1 - j]: the variable with coefficient -1, so the rows run backwards
    assert any(s == "even-reverse" and p == 2 for *_, s, p, _ in sum(loops, []))
    # `omp for` inside `omp parallel`: the team's size
    assert sum(1 for *_, s, p, a in sum(loops, []) if p == 3) >= 4
    assert runs and all(0 <= int(r.split()[3]) < 256 for r in runs)


def test_map_holds_how_each_reference_walks_its_unit(tmp_path):
    # For the simulator's model: each reference of a loop body in source order, its
    # byte offset in the unit, its stride in the innermost loop holding it; and which
    # loops ran more than once (the three time-step loops, not the initialisation).
    prog = build(tmp_path, "-fopenmp")
    m = tmp_path / "p.map"
    run(prog, "300", "x", threads=3, FORESIGHT_COLOR="sim", FORESIGHT_COLOR_MAP=str(m))
    lines = [ln.split() for ln in m.read_text().splitlines()]
    again = {f[9]: f[13] for f in lines if f[0] == "ref"}
    walks: dict[str, list[tuple]] = {}
    for f in lines:
        if f[0] == "access":
            base, _unit, first, count, shift, within, stride, loop, phase, seq, way, rw, \
                _call = f[1:]
            walks.setdefault(loop, []).append((int(seq), int(first), int(count), int(shift),
                                               int(within), int(stride), int(phase), way,
                                               rw))
    init = next(loop for loop, w in walks.items() if len(w) == 3)
    assert again[init] == "0"
    assert sorted(v for k, v in again.items() if k != init) == ["1"] * (len(again) - 1)
    # rx[j][i] = x[j + 1][i] - x[j - 1][i] + y[j][i + 1] * w[j][i]: one phase (the i loop)
    sten = next(w for w in walks.values() if len(w) == 5)
    assert sorted(w[0] for w in sten) == [0, 1, 2, 3, 4]
    assert {(sh, wi, st, ph) for _, _, _, sh, wi, st, ph, _, _ in sten} == \
        {(0, 0, 8, 1), (1, 0, 8, 1), (-1, 0, 8, 1), (0, 8, 8, 1)}
    # y[n - 1 - j][0] += x[j][1] in the parallel loop's own body: phase 0, no stride (y read
    # and stored)
    body = next(w for w in walks.values() if len(w) == 3 and all(ph == 0 for *_, ph, _, _ in w))
    assert {(wi, st, way) for _, _, _, _, wi, st, _, way, _ in body} == {(0, 0, "v"),
                                                                         (8, 0, "f")}


ONCE_AND_AGAIN = r"""
#include <stdio.h>
#define N 256
static double a[N][N], b[N][N];
int main(void)
{
    #pragma omp parallel
    {
        #pragma omp for
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++)
                a[j][i] = i + j;
    }
    for (int t = 0; t < 3; t++) {
        #pragma omp parallel for
        for (int j = 0; j < N; j++)
            for (int i = N - 1; i >= 1; i -= 2)
                b[j][i] += a[j][i - 1];
    }
    printf("%.1f\n", b[7][9]);
    return 0;
}
"""


def test_a_loop_the_team_shares_once_is_not_run_again_and_strides_take_the_step(tmp_path):
    # The orphaned `omp for` runs once, but each of the team's threads passes its summary:
    # AGAIN 0; the time-step loop's AGAIN 1.  i -= 2 walks 16 bytes down a row, and
    # b[j][i] += ... loads b[j][i] before it stores it.
    (tmp_path / "o.c").write_text(ONCE_AND_AGAIN)
    p = subprocess.run([FORESIGHT, "cc", "--color", "-fopenmp", "-O2", "o.c", "-o", "o"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    m = tmp_path / "o.map"
    run(tmp_path / "o", threads=3, FORESIGHT_COLOR="sim", FORESIGHT_COLOR_MAP=str(m))
    lines = [ln.split() for ln in m.read_text().splitlines()]
    again = {f[9]: f[13] for f in lines if f[0] == "ref"}
    walks = {}
    for f in lines:
        if f[0] == "access":
            walks.setdefault(f[8], []).append((int(f[6]), int(f[7]), f[12]))
    assert sorted(again.values()) == ["0", "1"]
    once = next(loop for loop, a in again.items() if a == "0")
    assert walks[once] == [(0, 8, "w")]
    step = next(w for loop, w in walks.items() if loop != once)
    assert sorted(step) == [(-8, -16, "r"), (0, -16, "r"), (0, -16, "w")]   # += reads b


def test_report_names_what_is_not_summarised(tmp_path):
    (tmp_path / "p.c").write_text(PROGRAM)
    p = subprocess.run([FORESIGHT, "cc", "--color", "--report", "-fopenmp", "-O2", "-c",
                        "p.c"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rep = p.stderr
    assert re.search(r"p\.c:\d+: \[color\] no coloring summary: schedule\(dynamic\)", rep)
    assert re.search(r"not summarised: line \d+: y\[idx\[j\]\]\[3\]: index is not affine",
                     rep)
    assert re.search(r"no coloring summary: collapse\(2\)", rep)
    assert len(re.findall(r"\[color\] coloring summary of", rep)) == 6


def test_serial_build_summarises_one_thread(tmp_path):
    """Without -fopenmp the pragmas are ignored: the loops run on one thread."""
    prog = build(tmp_path, "-Wno-unknown-pragmas")
    plain = build(tmp_path, "-Wno-unknown-pragmas", color=False)
    m = tmp_path / "s.map"
    assert run(prog, FORESIGHT_COLOR="sim", FORESIGHT_COLOR_MAP=str(m)) == run(plain)
    _, refs, _ = read_map(m)
    assert refs and all(r[7] == "1" for r in refs)


def test_without_color_the_parallel_loops_are_untouched(tmp_path):
    (tmp_path / "p.c").write_text(PROGRAM)
    (tmp_path / "out").mkdir()
    p = subprocess.run([FORESIGHT, "cc", "--emit-c", "out", "-fopenmp", "-O2", "-c", "p.c"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    text = (tmp_path / "out" / "p.c").read_text()
    assert "foresight_color" not in text


def test_arrays_used_without_a_summary_are_declared(tmp_path):
    """`u[nb[i]]`: u gets no partition from that loop, but its fixed size is declared, so
    the runtime counts its pages as every thread's (beyond the paper: su2cor)."""
    (tmp_path / "g.c").write_text(r"""
#include <stdio.h>
#define N 4096
static double u[N], w[N];
static int nb[N];
int main(void)
{
    for (int i = 0; i < N; i++) {
        nb[i] = (i * 7) % N;
        u[i] = i;
    }
    #pragma omp parallel for
    for (int i = 0; i < N; i++)
        w[i] = u[nb[i]] * 0.5;
    double s = 0;
    for (int i = 0; i < N; i++)
        s += w[i];
    printf("%.3f\n", s);
    return 0;
}
""")
    p = subprocess.run([FORESIGHT, "cc", "--color", "-fopenmp", "-O2", "-Wall", "-Wextra",
                        "-Werror", "g.c", "-o", "g"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    m = tmp_path / "g.map"
    out = run(tmp_path / "g", threads=2, FORESIGHT_COLOR="sim", FORESIGHT_COLOR_MAP=str(m))
    assert out == f"{sum(((i * 7) % 4096) * 0.5 for i in range(4096)):.3f}\n"
    arrays, refs, _ = read_map(m)
    assert sorted(arrays.values()) == [4096 * 4, 4096 * 8, 4096 * 8]   # nb, w, and u
    assert sorted(int(r[1]) for r in refs) == [4, 8]                    # nb's and w's only


TRAPS = r"""
#include <stdio.h>
static int calls, evals, picks;
static int chunk(void) { return ++calls, 4; }
static int team(void) { return ++picks, 2; }
#define CHUNK chunk()
#define NT team()
#define UPPER (__atomic_add_fetch(&evals, 1, __ATOMIC_RELAXED), 100) /* per thread */
#define STEP 1 + 0 * __COUNTER__
int a[100], b[100];
int main(void)
{
#pragma omp parallel for schedule(static, CHUNK)
    for (int i = 0; i < 100; i++) a[i] = i;
#pragma omp parallel for num_threads(NT)
    for (int i = 0; i < 100; i++) b[i] = a[i];
#pragma omp parallel for
    for (int i = 0; i < UPPER; i++) a[i] += b[i];
#pragma omp parallel for schedule(static, STEP)
    for (int i = 0; i < 100; i++) b[i] += 1;
    /* serial for now:
#pragma omp parallel for */
    for (int i = 0; i < 100; i++) a[i] += 1;
#pragma omp parallel for // rows
    for (int i = 0; i < 100; i++) b[i] += a[i];
    printf("calls=%d picks=%d evals=%d counter=%d %d %d\n", calls, picks, evals,
           __COUNTER__, a[99], b[99]);
    return 0;
}
"""


def test_clauses_and_comments_that_would_change_the_program(tmp_path):
    """Macros with side effects in a chunk, num_threads and a bound are not evaluated a
    second time; a directive in a comment is no directive; a comment after one is no
    clause; and the text compiles as transformed (no fallback to the original)."""
    (tmp_path / "p.c").write_text(TRAPS)
    flags = ["-fopenmp", "-O2", "-Wall", "-Wextra", "-Werror", "p.c"]
    p = subprocess.run(["cc", *flags, "-o", "po"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([FORESIGHT, "cc", "--color", "--report", *flags, "-o", "pc"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0 and "did not compile" not in p.stderr, p.stderr
    assert "may have side effects" in p.stderr
    assert re.search(r"p\.c:\d+: \[color\] coloring summary .* to a, b", p.stderr)  # // rows
    want = run(tmp_path / "po", threads=2)
    assert run(tmp_path / "pc", threads=2) == want
    assert run(tmp_path / "pc", threads=2, FORESIGHT_COLOR="sim",
               FORESIGHT_COLOR_MAP=str(tmp_path / "p.map")) == want


def test_a_file_with_its_own_line_numbers_gets_no_summary(tmp_path):
    (tmp_path / "l.c").write_text('#include <stdio.h>\nint a[100];\nint main(void)\n{\n'
                                  '#line 100 "gen.c"\n#pragma omp parallel for\n'
                                  '    for (int i = 0; i < 100; i++) a[i] = i;\n'
                                  '    printf("%s:%d %d\\n", __FILE__, __LINE__, a[99]);\n'
                                  '    return 0;\n}\n')
    p = subprocess.run([FORESIGHT, "cc", "--color", "--report", "-fopenmp", "-O2", "l.c",
                        "-o", "l"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "sets its own line numbers" in p.stderr
    assert run(tmp_path / "l", threads=2) == "gen.c:102 99\n"


def test_summaries_start_no_openmp_threads(tmp_path):
    """libgomp cannot run a parallel region in a child forked after its threads started:
    a program whose first region is serial (`if(0)`) forks and uses OpenMP in the child,
    and FORESIGHT_COLOR=sim must not have started any."""
    (tmp_path / "f.c").write_text(r"""
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
int a[100];
int main(void)
{
#pragma omp parallel for if(0)
    for (int i = 0; i < 100; i++) a[i] = i;
    if (fork() == 0) {
#pragma omp parallel num_threads(2)
        a[0] = 0;
        _exit(0);
    }
    wait(NULL);
    printf("done %d\n", a[99]);
    return 0;
}
""")
    p = subprocess.run([FORESIGHT, "cc", "--color", "-fopenmp", "-O2", "f.c", "-o", "f"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    e = {**os.environ, "OMP_NUM_THREADS": "2", "FORESIGHT_COLOR": "sim",
         "FORESIGHT_COLOR_MAP": str(tmp_path / "f.map")}
    r = subprocess.run([str(tmp_path / "f")], env=e, capture_output=True, text=True,
                       timeout=60)
    assert r.stdout == "done 99\n"


def test_timestamp_is_the_sources(tmp_path):
    """cc compiles a transformed copy: __TIMESTAMP__ must still be the source's time."""
    src = tmp_path / "t.c"
    src.write_text('#include <stdio.h>\nint a[100];\nint main(void)\n{\n'
                   '#pragma omp parallel for\n    for (int i = 0; i < 100; i++) a[i] = i;\n'
                   '    printf("%s %d\\n", __TIMESTAMP__, a[99]);\n    return 0;\n}\n')
    os.utime(src, (1577836800, 1577836800))   # 2020-01-01 00:00:00 UTC
    for cmd, out in ((["cc"], "o"), ([FORESIGHT, "cc", "--color"], "c")):
        p = subprocess.run([*cmd, "-fopenmp", "-O2", "t.c", "-o", out], cwd=tmp_path,
                           capture_output=True, text=True, env={**os.environ, "TZ": "UTC"})
        assert p.returncode == 0, p.stderr
    assert run(tmp_path / "c") == run(tmp_path / "o")
    assert "2020" in run(tmp_path / "c")


RESTRICT = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64;
    double (*fine)[n] = malloc(sizeof(double) * 2 * (size_t)n * (size_t)n);
    double (*coarse)[n] = malloc(sizeof(double) * (size_t)n * (size_t)n);
    #pragma omp parallel for
    for (int j = 0; j < 2 * n; j++)
        for (int i = 0; i < n; i++)
            fine[j][i] = i + 0.5 * j;
    #pragma omp parallel for
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            coarse[j][i] = 0.5 * (fine[2 * j][i] + fine[2 * j + 1][i]);
            fine[2 * j][i] *= 0.5;
        }
    double s = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            s += coarse[j][i] + fine[2 * j + 1][i];
    printf("%.6f\n", s);
    free(fine);
    free(coarse);
    return 0;
}
"""


def test_a_coefficient_of_two_makes_a_unit_of_two_strides(tmp_path):
    # The restriction of a multigrid: fine[2*j] and fine[2*j + 1] are unit j of two rows,
    # the second a row into it; coarse[j] one row.  The fine grid's extent counts in
    # bytes across both loops (rows of one, units of two).
    (tmp_path / "p.c").write_text(RESTRICT)
    plain, colored = tmp_path / "po", tmp_path / "pc"
    for cmd, out in ((["cc"], plain), ([FORESIGHT, "cc", "--color"], colored)):
        p = subprocess.run([*cmd, "-O2", "-fopenmp", "-Wall", "-Werror", "p.c", "-o", str(out)],
                           cwd=tmp_path, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    m = tmp_path / "r.map"
    for threads in (1, 2, 3):
        assert run(colored, "64", threads=threads, FORESIGHT_COLOR="sim",
                   FORESIGHT_COLOR_MAP=str(m)) == run(plain, "64", threads=threads)
    arrays, refs, _ = read_map(m)
    row = 64 * 8
    assert sorted(arrays.values()) == [64 * row, 128 * row]
    units = {(int(r[1]), int(r[3]), r[10]) for r in refs}   # unit, count, access
    assert (row, 128, "w") in units                      # fine, initialised by rows
    assert (2 * row, 64, "w") in units                   # fine[2*j], fine[2*j + 1]
    assert (row, 64, "w") in units                       # coarse
    walks = [ln.split() for ln in m.read_text().splitlines() if ln.startswith("access")]
    within = sorted(int(f[6]) for f in walks if int(f[2]) == 2 * row)
    assert within == [0, 0, row], within                 # fine[2*j] twice, fine[2*j + 1]


def test_sim_without_a_map_says_so_and_runs(tmp_path):
    # FORESIGHT_COLOR=sim is nothing but its map: without one, one line says coloring is
    # off, and the program runs as built.
    colored = build(tmp_path, "-fopenmp")
    plain = build(tmp_path, "-fopenmp", color=False)
    env = {k: v for k, v in os.environ.items() if k != "FORESIGHT_COLOR_MAP"}
    r = subprocess.run([str(colored), "60"], env={**env, "FORESIGHT_COLOR": "sim"},
                       capture_output=True, text=True, check=True)
    assert r.stdout == run(plain, "60")
    assert r.stderr == ("foresight: FORESIGHT_COLOR=sim needs FORESIGHT_COLOR_MAP, the file "
                        "it writes the map to; page coloring is off\n")
