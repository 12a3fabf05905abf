"""What the generated code does at run time, counted by the runtime's own statistics.

The golden tests check the compiler's decisions; these check that the hints the
generated code issues are the ones those decisions promise: a prolog for indirect
references, block streams that carry on across rows instead of restarting per row,
releases behind the trailing reference, and invariance decided per nest.

The compiler's decisions are read from the report's data (`--report-json`: hints,
references, loops), not from its prose; the few checks of wording left are marked as
such (the text the user reads is then what is tested).  Why a reference was refused is
tested per stage in tests/compiler/test_plan.py and test_locality.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from foresight.compiler.options import CompileOptions
from foresight.compiler.pipeline import transform
from foresight.compiler.report import format_report
from foresight.compiler.schedule.distance import LEAD_DS_DI

ROOT = Path(__file__).resolve().parents[2]
FORESIGHT = ROOT / ".venv" / "bin" / "foresight"


def build(tmp_path: Path, code: str, *flags: str) -> Path:
    src = tmp_path / "prog.c"
    src.write_text(code)
    exe = tmp_path / ("prog" + "".join(f.strip("-") for f in flags))
    subprocess.run([str(FORESIGHT), "cc", "-O1", "-Wall", "-Wextra", "-Werror", *flags,
                    str(src), "-o", str(exe)], check=True, cwd=tmp_path)
    return exe


def run_stats(exe: Path, *args: str, **env: str) -> tuple[str, dict]:
    """Run EXE with statistics.  Its nests keep their hints though its data fit in
    memory (FORESIGHT_INCORE=hint), unless ENV says otherwise: these tests are of the
    hints themselves."""
    stats = exe.with_suffix(".stats.json")
    e = {**os.environ, "FORESIGHT_STATS": str(stats), "FORESIGHT_INCORE": "hint", **env}
    out = subprocess.run([str(exe), *args], check=True, capture_output=True, text=True, env=e)
    return out.stdout, json.loads(stats.read_text())


# For tests that check every hinted address lies inside a mapping (bad_input): a queued
# request can reach a worker after the program has freed the memory it names (under CPU
# contention hundreds were still queued at free()), and is then counted as unmapped.
# Issued by the calling thread, each request is checked while its memory is still mapped.
CHECKED_AT_HINT = {"FORESIGHT_INLINE": "all"}


def site(stats: dict, ref: str) -> dict:
    """The one site of `ref` the run used (a version of the nest names its loop)."""
    (s,) = [s for s in stats["sites"]
            if s["ref"] == ref or s["ref"].startswith(ref + " (across ")]
    return s


def site_at(stats: dict, ref: str, line: int) -> dict:
    """The one site of `ref` on source line `line`."""
    (s,) = [s for s in stats["sites"] if s["ref"] == ref and s["line"] == line]
    return s


GATHER = """
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    (void)argc;
    long n = atol(argv[1]);
    long *idx = malloc((size_t)n * sizeof *idx);
    double *data = malloc((size_t)n * sizeof *data);
    for (long i = 0; i < n; i++) { idx[i] = (i * 7919) % n; data[i] = (double)i; }
    double s = 0;
    for (long i = 0; i < n; i++)
        s += data[idx[i]];
    printf("%.1f\\n", s);
    free(idx);
    free(data);
    return 0;
}
"""


def test_nests_run_unhinted_while_the_program_fits_in_memory(tmp_path):
    # By default a nest entered while the program's address space fits in the memory
    # limit runs without hints: no site is considered, the entries are counted, and
    # the output is the original's.  Under a limit the program exceeds, it is hinted.
    exe = build(tmp_path, GATHER)
    base = build(tmp_path, GATHER, "--no-prefetch")
    n = 50000
    plain = subprocess.run([str(base), str(n)], capture_output=True, text=True).stdout
    out, stats = run_stats(exe, str(n), FORESIGHT_INCORE="skip")
    assert out == plain
    assert stats["global"]["nest_entries_unhinted"] >= 1
    assert stats["global"]["considered"] == 0
    out, stats = run_stats(exe, str(n), FORESIGHT_INCORE="skip", FORESIGHT_MEM="1M")
    assert out == plain
    assert stats["global"]["nest_entries_unhinted"] == 0
    assert site(stats, "data[idx[i]]")["considered"] > 0


SHORT_CALLS = """
#include <stdio.h>
#include <stdlib.h>
static double dot(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}
int main(int argc, char **argv)
{
    (void)argc;
    int n = atoi(argv[1]);
    long calls = atol(argv[2]);
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    double *x = a, *y = b;
    for (int i = 0; i < n; i++) { x[i] = i % 7; y[i] = i % 5; }
    double s = 0;
    for (long c = 0; c < calls; c++)
        s += dot(a + c % 2, b, n - 1);
    printf("%.1f\\n", s);
    free(a);
    free(b);
    return 0;
}
"""


def test_runs_of_a_nest_spanning_less_than_the_floor_go_unhinted(tmp_path):
    # A short loop in a function called very often (a key comparison, a small dot
    # product): its bound is known only at run time, so the nest's entry tests its span
    # and runs it unhinted, with no call into the library, when that is under a quarter
    # block (16 KiB).  The same nest over 64 KiB and over a long array is hinted.
    exe = build(tmp_path, SHORT_CALLS)
    plain = build(tmp_path, SHORT_CALLS, "--no-prefetch")
    for n, calls in (("5", "100000"), ("1000", "10"), ("4000", "10"), ("100000", "3")):
        out, stats = run_stats(exe, n, calls)
        assert out == subprocess.run([str(plain), n, calls], capture_output=True,
                                     text=True).stdout
        sites = {s["ref"] for s in stats["sites"]}
        if n in ("4000", "100000"):   # 2 x 31,992 bytes, 2 x 800 KB a run: hinted
            assert site(stats, "a[i]")["considered"] > 0
        else:   # 2 x 32 bytes, 2 x 7,992 bytes: the nest never calls the library
            assert stats["global"]["considered"] == 0 and "a[i]" not in sites, stats
    entry = next(e for e in report(tmp_path, SHORT_CALLS) if e["function"] == "dot")
    assert entry["small_runs_unhinted"] is True and entry["run_floor_bytes"] == 16384
    # The paper preset hints every run, as the paper does.
    paper = next(e for e in report(tmp_path, SHORT_CALLS, preset="paper")
                 if e["function"] == "dot")
    assert paper["small_runs_unhinted"] is False


SEGMENTS = """
#include <stdio.h>
#include <stdlib.h>
static double dot(int n, const double *x, const double *y)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}
int main(int argc, char **argv)
{
    (void)argc;
    int m = atoi(argv[1]), nb = 4096;
    double *a[4], g = 0;
    for (int c = 0; c < 4; c++) {
        a[c] = malloc((size_t)m * sizeof(double));
        for (int r = 0; r < m; r++)
            a[c][r] = (r + c) % 11;
    }
    for (int r0 = 0; r0 < m; r0 += nb)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j <= i; j++)
                g += dot(m - r0 < nb ? m - r0 : nb, &a[i][r0], &a[j][r0]);
    printf("%.1f\\n", g);
    for (int c = 0; c < 4; c++)
        free(a[c]);
    return 0;
}
"""


def test_a_helper_on_consecutive_segments_is_hinted_ahead_across_calls(tmp_path):
    # dot() runs 32 KiB per call (under a block), on segments of four columns in turn:
    # each call is a new entry of its nest, and the library links a call's run to the
    # run that ended where it begins (runs.c), hinting that column ahead.
    exe = build(tmp_path, SEGMENTS)
    plain = build(tmp_path, SEGMENTS, "--no-prefetch")
    # The residency filter off: with it, a site whose hints all find their pages
    # resident goes quiet and skips its short runs before they reach the library (a
    # clean-clone run under load counted no continuation at all).
    out, stats = run_stats(exe, "262144", FORESIGHT_FILTER="0")
    assert out == subprocess.run([str(plain), "262144"], capture_output=True,
                                 text=True).stdout
    # 64 blocks of rows; from the second on, each column's first run per site continues.
    assert stats["global"]["short_runs_continued"] >= 63 * 4, stats["global"]
    assert site(stats, "x[i]")["pages_requested"] > 0


def test_indirect_reference_gets_a_prolog_of_d_iterations(tmp_path):
    exe = build(tmp_path, GATHER)
    base = build(tmp_path, GATHER, "--no-prefetch")
    n = 50000
    # The indirect reference shares the loop with the index stream, so it gets half of
    # the 64 KiB look-ahead at a page per iteration: d = 8.  The prolog covers iterations
    # 0..7 on entry, the steady state one target per iteration.  (Without the filter no
    # site goes quiet: a quiet site's stretch is taken 256 calls at a time, and what a
    # run of the nest leaves of it counts as skipped calls too.)
    out, stats = run_stats(exe, str(n), FORESIGHT_LOOKAHEAD="64K", FORESIGHT_FILTER="0")
    assert site(stats, "data[idx[i]]")["considered"] == n + 8
    _, stats = run_stats(exe, str(n), FORESIGHT_LOOKAHEAD="64K")
    assert n + 8 <= site(stats, "data[idx[i]]")["considered"] < n + 8 + 256
    assert out == subprocess.run([str(base), str(n)], capture_output=True, text=True).stdout
    # A loop shorter than d (a page per iteration in half of 256 KiB: d = 32), though
    # spanning more than a block: the prolog stops at the last iteration.
    _, stats = run_stats(exe, "20", FORESIGHT_LOOKAHEAD="256K", FORESIGHT_FILTER="0")
    assert site(stats, "data[idx[i]]")["considered"] == 20 + 20
    # The index stream runs a stream's distance beyond the look-ahead loads of idx; the
    # loop has a stream and an indirect reference, so each gets half the look-ahead.
    rule = {h["ref"]: h["distance_rule"] for nest in report(tmp_path, GATHER)
            for h in nest.get("hints", [])}
    assert rule["idx[i]"] == {"kind": "stream", "lead": LEAD_DS_DI, "halved": True, "fixed": 0}
    assert rule["data[idx[i]]"] == {"kind": "indirect", "lead": 0, "halved": True, "fixed": 0}


ROWS = """
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    (void)argc;
    long rows = atol(argv[1]), m = atol(argv[2]);
    double (*a)[m] = realloc(NULL, sizeof(double[rows][m])); /* filled by a hinted nest */
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < m; j++)
            a[i][j] = (double)(i + j);
    double s = 0;
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < m; j++)
            s += a[i][j];
    printf("%.1f\\n", s);
    free(a);
    return 0;
}
"""


def test_block_stream_carries_on_across_rows_and_releases_behind(tmp_path):
    exe = build(tmp_path, ROWS)
    rows, m = 4096, 512   # 4 KiB rows, 16 MiB: the inner trip is only known at run time
    out, stats = run_stats(exe, str(rows), str(m), FORESIGHT_LOOKAHEAD="1M")
    assert out.strip() == f"{sum((i + j) for i in range(rows) for j in range(m)):.1f}"
    (init, total) = [s for s in stats["sites"] if s["ref"].startswith("a[i][j]")]
    for s in (init, total):
        # 256 blocks of 64 KiB plus a 1 MiB prolog (17 blocks): a per-row restart would
        # consider 17 blocks for each of the 4,096 rows.
        assert s["considered"] < 2 * (256 + 17), s
    assert stats["global"]["releases"] > 0
    assert stats["global"]["pages_release_requested"] >= (16 << 20) // 4096 // 2


def report(tmp_path: Path, code: str, **opts) -> list[dict]:
    src = tmp_path / "r.c"
    src.write_text(code)
    return transform(src, [], CompileOptions(**opts)).report


def test_variable_written_outside_the_nest_is_invariant_inside(tmp_path):
    (nest,) = [n for n in report(tmp_path, """
void f(double *A, double *y, long n0)
{
    long n = 1;
    while (n < n0)
        n++;
    for (long i = 0; i < n; i += 512)
        for (long j = 0; j < n; j++)
            y[i] += A[j * n + i];
}
""") if n["line"] == 7]
    assert {r["ref"]: r["kind"] for r in nest["references"]}["A[j * n + i]"] == "affine"
    assert "A[j * n + i]" in {h["ref"] for h in nest["hints"]}


def test_variable_written_inside_the_nest_is_not_invariant(tmp_path):
    (nest,) = report(tmp_path, """
void f(double *A, double *y, long n)
{
    for (long i = 0; i < 100; i++)
        for (long j = 0; j < 100; j++) {
            y[i] += A[j * n + i];
            if (y[i] > 1e9)
                n++;
        }
}
""")
    assert "A[j * n + i]" not in {h["ref"] for h in nest["hints"]}
    # n is not invariant, so the index is not affine: the reference is left out of the
    # analysis, with a problem reported on its loop.
    assert "A[j * n + i]" not in {r["ref"] for r in nest["references"]}
    assert [lp["var"] for lp in nest["loops"] if lp["problems"]] == ["j"]


def test_globals_and_constants_assigned_in_the_nest_are_analysed(tmp_path):
    # File-scope arrays and bounds in a function that also calls something (NPB style),
    # and a local assigned a constant before the inner loop (NPB SP's `i = 1`): both
    # nests get hints; a constant assigned under an `if` does not count.
    nests = report(tmp_path, """
#include <math.h>
static double u[64][64][64][5], *a;
static int nx, lo, hi;
double f(void)
{
    double s = 0;
    int i, j, k, m;
    for (j = 0; j < hi - lo + 1; j++)
        s += a[j];
    for (k = 0; k < nx; k++)
        for (j = 0; j < nx; j++) {
            i = 1;
            for (m = 0; m < 5; m++)
                s += u[k][j][i][m];
        }
    for (k = 0; k < nx; k++) {
        if (k > 3)
            i = 2;
        s += u[k][0][i][0];
    }
    return sqrt(s);
}
""")
    hinted = {n["line"]: {h["ref"] for h in n["hints"]} for n in nests}
    assert hinted[9] == {"a[j]"} and hinted[11] == {"u[k][j][i][m]"}
    assert not hinted[17]


def test_nest_with_a_label_is_left_alone(tmp_path):
    (nest,) = report(tmp_path, """
void f(double *y, long n)
{
    for (long i = 0; i < n; i++) {
        if (i == 5)
            goto out;
        y[i] = 0;
    out:;
    }
}
""")
    # Analysed, then left unchanged as a whole: no analysis of its references, no hints.
    assert nest["skipped"] and [lp["var"] for lp in nest["loops"]] == ["i"]
    assert "references" not in nest and "hints" not in nest
    # Wording on purpose: the report has no code for why a nest is skipped, only the
    # reason the user reads ("left unchanged: a label inside the nest ...").
    assert "label" in nest["skipped"]


def test_every_loop_left_unanalysed_is_reported_with_its_reason(tmp_path):
    nests = report(tmp_path, """
#define EACH(k, n) for (long k = 0; k < (n); k++)
double f(double *a, long n, double *e)
{
    double s = 0;
    for (double (*r)[n] = (double (*)[n])a; r < (double (*)[n])e; r++)
        s += (*r)[0];
    while (a < e)
        s += *a++;
    for (long i = 0; i < n; i++) {
        s += a[i];
        i += 1;
    }
    EACH(k, n) s += a[k];
    do {
        for (long j = 0; j < n; j++)
            s += a[j];
    } while (s < 0);
    for (long i = 1; i < n; i *= 2)
        s += a[i];
    return s;
}
""")
    # A user-facing message test: the reason each loop is left alone is the report's text
    # (there is no code for it in the JSON), so its wording is what is checked here.
    why = {n["line"]: n["skipped"] for n in nests if not n["loops"]}
    assert all(why.values()) and sorted(why) == [6, 8, 10, 14, 15, 19], why
    assert "pointer to objects of unknown or variable size" in why[6], why
    assert "while or do loop" in why[8], why
    assert "changed in the body (line 12)" in why[10], why
    assert "macro" in why[14], why
    assert "while or do loop" in why[15] and "on their own" in why[15], why
    assert "not one variable stepped by a constant" in why[19], why
    analysed = [n for n in nests if n["loops"]]
    assert [n["line"] for n in analysed] == [16], nests   # the for-loop inside the do loop
    text = format_report(nests)
    assert "r.c:6: in f()\n  left unchanged: the index r is a pointer" in text, text


def test_bases_read_through_a_chain_of_pointers(tmp_path):
    nests = report(tmp_path, """
struct g { long n; double *v; struct g *up; };
struct s { struct g *g; };
void touch(struct s *); static double half(double v) { return v / 2; }
double f(struct s *S, struct s t, struct g *G)
{
    double x = 0;
    for (long i = 0; i < S->g->n; i++) x += S->g->v[i];
    for (long i = 0; i < t.g->n; i++) x += t.g->v[i];
    for (long i = 0; i < 9999; i++) x += G->up->up->up->up->v[i];
    for (long i = 0; i < S->g->n; i++) { x += S->g->v[i]; if (x > 1e9) touch(S); }
    for (long i = 0; i < S->g->n; i++) { x += S->g->v[i]; if (x > 1e9) x = half(x); }
    return x;
}
""")
    hinted = {n["line"]: [(h["ref"], h["release"]) for h in n.get("hints", [])] for n in nests}
    assert hinted[8] == [("S->g->v[i]", "S->g->v[i]")], hinted
    assert hinted[9] == [("t.g->v[i]", "t.g->v[i]")], hinted
    # five loads: not followed (the reference is left out, with a problem on its loop)
    (five,) = [n for n in nests if n["line"] == 10]
    assert hinted[10] == [] and five["references"] == [] and five["loops"][0]["problems"]
    # the loop at line 11 calls a function defined elsewhere: no base is read ahead there
    assert hinted[11] == [], hinted
    # the one at line 12 calls a function that stores nothing through memory: as line 8
    assert hinted[12] == [("S->g->v[i]", "S->g->v[i]")], hinted


def test_three_level_pointer_arrays(tmp_path):
    nests = report(tmp_path, """
double g(double);
double f(double ***T, double *****Q, long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            for (long k = 0; k < 9999; k++) x += T[i][j][k];
    for (long i = 0; i < n; i++)
        for (long k = 0; k < 9999; k++) x += g(T[i][1][k]);
    for (long k = 0; k < 9999; k++) x += Q[1][2][3][4][k];
    return x;
}
""")
    by_line = {n["line"]: n for n in nests}
    (t,) = by_line[6]["references"]
    assert (t["ref"], t["predicate"]) == ("T[i][j][k]", "k mod 512 == 0")
    # A stream along k; T[i][j] is not a row of an array of rows: no rows read ahead.
    assert [(h["ref"], h["pipelining_loop"], h["rows_ahead_along"])
            for h in by_line[6]["hints"]] == [("T[i][j][k]", "k", None)]
    # T[i][1][k] next to a call of g() defined elsewhere (which may synchronise with other
    # threads), and Q's base loaded five times: left out, each with a problem on its loop.
    for line in (9, 11):
        n = by_line[line]
        assert n["references"] == [] and n["hints"] == [], n
        assert [lp["var"] for lp in n["loops"] if lp["problems"]] == ["k"], n


def test_clock_reads_do_not_stop_an_index_read_ahead(tmp_path):
    # A phase timer (clock_gettime, gettimeofday) in a nest orders no other thread's
    # writes: the gather's index is still read ahead; a function defined elsewhere may
    # synchronise, and there it is not.
    nests = report(tmp_path, """
#include <time.h>
#include <sys/time.h>
double now(void);
void f(double *data, const long *idx, double *out, long n, int iters)
{
    struct timespec ts;
    struct timeval tv;
    for (int it = 0; it < iters; it++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        gettimeofday(&tv, 0);
        for (long i = 0; i < n; i++) out[i] += data[idx[i]];
    }
    for (int it = 0; it < iters; it++) {
        (void)now();
        for (long i = 0; i < n; i++) out[i] += data[idx[i]];
    }
}
""")
    kinds = {n["line"]: [r["kind"] for r in n["references"]] for n in nests}
    assert "indirect" in kinds[9], nests
    assert "indirect" not in kinds[14], nests


def test_complex_library_calls_are_no_synchronisation(tmp_path):
    # CMPLX (which glibc's <complex.h> defines for gcc only) and conj() compute: the
    # member base p->w is read at nest entry and the loop is hinted.
    (nest,) = report(tmp_path, """
#include <complex.h>
#include <math.h>
struct plan { double complex *w; };
void f(struct plan *p, long n)
{
    for (long k = 0; k < n; k++)
        p->w[k] = conj(CMPLX(cos((double)k), -sin((double)k)));
}
""")
    assert [h["ref"] for h in nest["hints"]] == ["p->w[k]"], nest
    # and they write nothing, so a member bound stays one the body cannot change: split
    (nest,) = report(tmp_path, """
#include <complex.h>
struct plan { long n; double complex *w; };
double g(struct plan *p)
{
    double s = 0;
    for (long k = 0; k < p->n; k++)
        s += cabs(p->w[k]) + creal(conj(p->w[k]));
    return s;
}
""")
    assert [lp["strips"] for lp in nest["loops"]] == ["split"], nest


def test_openmp_loops_are_left_unchanged_and_reported(tmp_path):
    code = """
void f(double *a, long n)
{
    _Pragma("omp parallel for")
    for (long i = 0; i < n; i++) a[i] = 0;
#pragma omp parallel
    {
        for (long i = 0; i < n; i++) a[i] += 1;
    }
}
"""
    src = tmp_path / "o.c"
    src.write_text(code)
    plain = transform(src, [], CompileOptions())
    nests = {n["line"]: n for n in plain.report}
    # _Pragma on the line above: the loop is analysed, the nest left unchanged.
    assert nests[5]["skipped"] and nests[5]["loops"] and "hints" not in nests[5]
    # Without -fopenmp the directive is ignored: the loop under it runs on one thread.
    assert nests[8]["hints"] and not nests[8]["skipped"]
    omp = transform(src, ["-fopenmp"], CompileOptions())
    assert not omp.changed, omp.text
    # Under -fopenmp both loops are analysed (libclang is given _OPENMP, not -fopenmp,
    # so it shows the statements under directives) and left unchanged.
    assert {n["line"]: (bool(n["skipped"]), len(n["loops"])) for n in omp.report} == {
        5: (True, 1), 8: (True, 1)}
    # Wording on purpose: the report has no code for why a nest is skipped, and these
    # two reasons are what the user reads.
    assert "follows a #pragma" in nests[5]["skipped"]
    assert "inside an OpenMP directive's statement (line 6)" in \
        {n["line"]: n for n in omp.report}[8]["skipped"]


CSR = """
void spmv(long n, const int *rp, const int *col, const double *x, double *y)
{
    for (long i = 0; i < n; i++) {
        double s = 0;
        for (long k = rp[i]; k < rp[i + 1]; k++)
            s += x[col[k]];
        y[i] = s;
    }
}
void count(long n, int *rp, const int *col, double *x)
{
    for (long i = 0; i < n; i++) {
        for (long k = rp[i]; k < rp[i + 1]; k++)
            x[col[k]] += 1;
        rp[i] = rp[i];
    }
}
"""


def test_sparse_rows_look_ahead_is_on_and_can_be_turned_off(tmp_path):
    src = tmp_path / "s.c"
    src.write_text(CSR)
    off = {n["function"]: n for n in
           transform(src, [], CompileOptions(sparse_rows=False)).report}
    on = {n["function"]: n for n in transform(src, [], CompileOptions()).report}
    # the row's stretch of col is not reused across rows, whether or not x is prefetched
    (col,) = [r for r in off["spmv"]["references"] if r["ref"] == "col[k]"]
    assert col["reuse"]["i"] == "none", col
    assert "x[col[k]]" not in {h["ref"] for h in off["spmv"]["hints"]}
    (x,) = [h for h in on["spmv"]["hints"] if h["ref"] == "x[col[k]]"]
    # along k, reading col ahead up to the end of the last row of i
    assert (x["pipelining_loop"], x["indirect_index"], x["sparse_rows_along"]) == (
        "k", "col[k]", "i")
    # a row loop that stores an int through memory might change rp: not followed
    assert "x[col[k]]" not in {h["ref"] for h in on["count"]["hints"]}
    assert "x[col[k]]" in {r["ref"] for r in on["count"]["references"]}


def test_indirect_target_known_to_fit_in_memory_is_not_prefetched(tmp_path):
    nests = report(tmp_path, """
#include <stdlib.h>
static double big[1 << 24];   /* 128 MiB: more than the 64 MiB assumed */
static double small[1 << 10];
void f(const int *key, long n)
{
    long *count = calloc(1024, sizeof *count);
    long *heap = malloc(1 << 20);
    for (long i = 0; i < n; i++)
        count[key[i]]++;
    for (long i = 0; i < n; i++)
        heap[key[i]] += 1;
    for (long i = 0; i < n; i++)
        big[key[i]] += small[key[i]];
    free(count);
    free(heap);
}
""")
    refs = {r["ref"]: r for nest in nests for r in nest["references"] if r["kind"] == "indirect"}
    hinted = {h["ref"] for nest in nests for h in nest["hints"]}
    # Objects of at most an eighth of the 64 MiB assumed stay in memory once touched.
    assert {r: refs[r]["object_bytes"] for r in refs} == {
        "count[key[i]]": 8192, "heap[key[i]]": 1 << 20, "big[key[i]]": 128 << 20,
        "small[key[i]]": 8192}
    assert hinted & set(refs) == {"big[key[i]]"}
    assert refs["big[key[i]]"]["predicate"] == "True"
    # Only the index of a prefetched indirect reference runs ahead of the look-ahead
    # loads; the others are ordinary streams (4x the look-ahead before: 16 MiB of a
    # 64 MiB cap).
    feeds = [h["feeds_indirect"] for nest in nests for h in nest.get("hints", [])
             if h["ref"] == "key[i]"]
    assert feeds == [False, False, True]


def test_local_defined_inside_the_nest_stands_for_its_initializer(tmp_path):
    (nest,) = report(tmp_path, """
void f(double *a, int *col, long n, long m)
{
    for (long i = 0; i < n; i++) {
        long start = i * (m + 1);
        for (long k = 0; k < m; k++)
            a[start + k + 1] = col[start + k];
    }
}
""")
    kinds = {r["ref"]: r["kind"] for r in nest["references"]}
    assert kinds["a[start + k + 1]"] == "affine" and kinds["col[start + k]"] == "affine"
    offsets = {r["ref"]: r["byte_offset"] for r in nest["references"]}
    assert "m" in offsets["a[start + k + 1]"] and "i" in offsets["a[start + k + 1]"]
    # A local written after its initializer is not a definition.
    (nest,) = report(tmp_path, """
void f(double *a, long n, long m)
{
    for (long i = 0; i < n; i++) {
        long start = i * m;
        if (a[0] > 0)
            start++;
        for (long k = 0; k < m; k++)
            a[start + k] = 0;
    }
}
""")
    assert "a[start + k]" not in {h["ref"] for h in nest["hints"]}


REUSED_ROW = """
#include <stdio.h>
#include <stdlib.h>
void f(double *a, const double *w, long n, long m)
{
    for (long i = 0; i < n; i++)
        for (long k = 0; k < m; k++)
            a[i * m + k] += w[k];
}
int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long n = atol(argv[1]), m = atol(argv[2]);
    double *a = calloc((size_t)(n * m), sizeof *a), *w = malloc((size_t)m * sizeof *w);
    for (long j = 0; j < m; j++)
        w[j] = (double)j;
    f(a, w, n, m);
    double s = 0;
    for (long j = 0; j < n * m; j++)
        s += a[j];
    printf("%.0f\\n", s);
    return 0;
}
"""


def test_data_reused_across_a_loop_of_unknown_volume_is_released_only_if_it_cannot_fit(
        tmp_path):
    # w[k] is reused for every i.  One iteration of i touches a row of a and all of w
    # (16 m bytes), known only at run time: the release of w is decided at nest entry.
    (nest,) = [n for n in report(tmp_path, REUSED_ROW) if n["function"] == "f"]
    decided = {h["ref"]: h for h in nest["hints"]}
    assert decided["w[k]"]["release"] == "w[k]"
    assert decided["w[k]"]["release_if_volume_exceeds_memory"] == "i"
    assert decided["a[i * m + k]"]["release_if_volume_exceeds_memory"] is None
    exe = build(tmp_path, REUSED_ROW)
    # 2 rows of 64 KiB: fits in 64 MiB, w is never released.
    out, stats = run_stats(exe, "64", "8192", FORESIGHT_MEM="64M")
    assert site(stats, "w[k]")["releases"] == 0
    assert site(stats, "a[i * m + k]")["releases"] > 0
    # Rows of 2 MiB against a 1 MiB memory: one iteration cannot keep w, so it is released.
    big, stats = run_stats(exe, "4", str(256 << 10), FORESIGHT_MEM="1M")
    assert site(stats, "w[k]")["releases"] > 0
    # Results are the same either way (and as without hints).
    plain, _ = run_stats(exe, "4", str(256 << 10), FORESIGHT_DISABLE="1")
    assert big == plain


CSR_SWEEPS = """
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    (void)argc;
    long n = atol(argv[1]), per = 8, nnz = n * per;
    long *rowstr = malloc((size_t)(n + 1) * sizeof *rowstr);
    long *col = malloc((size_t)nnz * sizeof *col);
    double *a = malloc((size_t)nnz * sizeof *a), *v = malloc((size_t)n * sizeof *v);
    for (long i = 0; i <= n; i++)
        rowstr[i] = i * per;
    for (long k = 0; k < nnz; k++) {
        a[k] = (double)(k % 13);
        col[k] = (k * 7919) % n;
    }
    for (long i = 0; i < n; i++)
        v[i] = 1.0 / (double)(i + 1);
    double s = 0;
    for (int it = 0; it < 3; it++)
        for (long i = 0; i < n; i++)
            for (long k = rowstr[i]; k < rowstr[i + 1]; k++)
                s += a[k] * v[col[k]];
    printf("%.6f\\n", s);
    return 0;
}
"""


def test_a_reused_sweep_whose_volume_entry_cannot_evaluate_is_measured_as_it_runs(tmp_path):
    # a[k] is reused by every `it`; one iteration's volume hangs on rowstr (loads), so
    # the entry cannot evaluate it: the stream measures its sweep and releases behind it
    # only once a sweep passes the memory limit.
    line = CSR_SWEEPS.splitlines().index("    for (int it = 0; it < 3; it++)") + 1
    nest = next(n for n in report(tmp_path, CSR_SWEEPS) if n["line"] == line)
    hint = next(h for h in nest["hints"] if h["ref"] == "a[k]")
    assert hint["release"] == "a[k]" and hint["release_volume"] == "measured"
    assert hint["release_if_volume_exceeds_memory"] == "it"
    assert any("once one sweep of it passes more than memory" in d for d in nest["decisions"])
    exe = build(tmp_path, CSR_SWEEPS)
    # 32 KiB of a per sweep under 64 MiB: never released.
    _, stats = run_stats(exe, "512", FORESIGHT_MEM="64M")
    assert site_at(stats, "a[k]", line + 3)["releases"] == 0
    # 4 MiB of a per sweep under 1 MiB: released behind once a sweep passes 1 MiB.
    big, stats = run_stats(exe, str(1 << 16), FORESIGHT_MEM="1M")
    assert site_at(stats, "a[k]", line + 3)["releases"] > 0
    plain, _ = run_stats(exe, str(1 << 16), FORESIGHT_DISABLE="1")
    assert big == plain


def test_reuse_is_judged_per_iteration_of_a_stepped_loop(tmp_path):
    # Over doubles, j += 1024 moves 8 KiB an iteration: no spatial reuse along j, so
    # the column walk below releases what it read (colsum of `foresight bench compiler`
    # had been kept whole for a reuse that does not exist); j += 2 moves 16 bytes.
    nests = report(tmp_path, """
void f(long rows, long cols, double (*M)[cols], double *s, double *a)
{
    for (long j = 0; j < cols; j += 1024)
        for (long i = 0; i < rows; i++)
            s[j] += M[i][j];
    for (long j = 0; j < cols; j += 2)
        a[j] = 0;
}
""")
    refs = {r["ref"]: r for n in nests for r in n["references"]}
    assert refs["M[i][j]"]["reuse"]["j"] == "none"
    assert refs["s[j]"]["reuse"]["j"] == "none"
    assert refs["a[j]"]["reuse"]["j"] == "spatial"
    hint = next(h for n in nests for h in n["hints"] if h["ref"] == "M[i][j]")
    assert hint["release"] == "M[i][j]" and hint["release_if_volume_exceeds_memory"] is None


REUSED_FIXED = """
#include <stdio.h>
#include <stdlib.h>
#define M (1L << 21)
static double w[M];
int main(int argc, char **argv)
{
    (void)argc;
    long n = atol(argv[1]);
    double *a = calloc((size_t)n * M, sizeof *a);
    for (long k = 0; k < M; k++)
        w[k] = (double)k;
    for (long i = 0; i < n; i++)
        for (long k = 0; k < M; k++)
            a[i * M + k] += w[k];
    double s = 0;
    for (long j = 0; j < n * M; j++)
        s += a[j];
    printf("%.0f\\n", s);
    free(a);
    return 0;
}
"""


def test_memory_that_decides_a_release_is_the_one_at_run_time(tmp_path):
    # One iteration of i touches 32 MiB (a row of a and all of w), known at compile time
    # and under the 64 MiB assumed: the paper keeps w.  What must stay between iterations
    # is w's 16 MiB (a's row is released behind); whether that fits is up to the memory
    # at run time, so the release of w is decided at nest entry.
    line = REUSED_FIXED.splitlines().index("    for (long i = 0; i < n; i++)") + 1
    nest = next(n for n in report(tmp_path, REUSED_FIXED) if n["line"] == line)
    decided = {h["ref"]: h for h in nest["hints"]}
    assert decided["w[k]"]["release_if_volume_exceeds_memory"] == "i"
    exe = build(tmp_path, REUSED_FIXED)

    def w_site(stats: dict) -> dict:
        return site_at(stats, "w[k]", line + 2)

    out, stats = run_stats(exe, "3", FORESIGHT_MEM="64M")
    assert w_site(stats)["releases"] == 0
    small, stats = run_stats(exe, "3", FORESIGHT_MEM="8M")
    assert w_site(stats)["releases"] > 0
    plain, _ = run_stats(exe, "3", FORESIGHT_DISABLE="1")
    assert out == small == plain
    # The paper preset decides with the memory assumed at compile time: kept.
    src = tmp_path / "r.c"
    paper = transform(src, [], CompileOptions(preset="paper")).report
    hint = next(h for n in paper if n["line"] == line for h in n["hints"]
                if h["ref"] == "w[k]")
    assert hint["release"] is None


PLANE_LINES = """
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    (void)argc;
    long nz = atol(argv[1]), ny = atol(argv[2]);
    double (*a)[ny][512] = realloc(NULL, sizeof(double[nz][ny][512]));
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < 512; i++)
                a[k][j][i] = (double)(k + j + i);
    double s = 0;
    for (long i = 0; i < 512; i++)
        for (long k = 0; k < nz; k++)
            s += a[k][0][i];
    printf("%.1f\\n", s);
    free(a);
    return 0;
}
"""


def test_release_volume_counts_pages_touched_not_the_range_spanned(tmp_path):
    # Each i walks a line along k: one page per plane, nz pages, and i + 1 reads the same
    # pages again.  64 planes of 256 KiB span 16 MiB but touch 256 KiB: under an 8 MiB
    # memory the line must stay (the address span would have released it every time).
    nests = [n for n in report(tmp_path, PLANE_LINES) if n["function"] == "main"]
    hint = next(h for n in nests for h in n["hints"] if h["ref"] == "a[k][0][i]")
    assert hint["release_if_volume_exceeds_memory"] == "i"
    exe = build(tmp_path, PLANE_LINES)
    out, stats = run_stats(exe, "64", "64", FORESIGHT_MEM="8M", FORESIGHT_RELEASE="auto")
    assert site(stats, "a[k][0][i]")["releases"] == 0
    plain, _ = run_stats(exe, "64", "64", FORESIGHT_DISABLE="1")
    assert out == plain
    # Lines longer than memory are released: 4,096 planes touch 16 MiB.
    _, stats = run_stats(exe, "4096", "1", FORESIGHT_MEM="8M")
    assert site(stats, "a[k][0][i]")["releases"] > 0


def test_small_fixed_extent_is_not_pipelined(tmp_path):
    # A 5x5 elimination called per grid point: its data is 200 bytes; a prolog of the
    # look-ahead window per call would prefetch far past it.
    (nest,) = [n for n in report(tmp_path, """
void solve5(double d[5][5], double x[5])
{
    for (int p = 0; p < 5; p++)
        for (int r = p + 1; r < 5; r++) {
            double f = d[r][p] / d[p][p];
            for (int c = p + 1; c < 5; c++)
                d[r][c] -= f * d[p][c];
            x[r] -= f * x[p];
        }
}
""")]
    # Analysed, and no hint (why: tests/compiler/test_plan.py, data too small for a block).
    assert nest["hints"] == [] and "d[r][c]" in {r["ref"] for r in nest["references"]}
    # The same loops over a matrix of unknown extent are pipelined.
    (nest,) = report(tmp_path, """
void sweep(long n, double (*d)[n])
{
    for (long p = 0; p < n; p++)
        for (long r = p + 1; r < n; r++)
            d[r][p] = 0;
}
""")
    assert [h["ref"] for h in nest["hints"]] == ["d[r][p]"]


PLANES = """
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    (void)argc;
    long nz = atol(argv[1]), nx = atol(argv[2]);
    double (*u)[nx] = malloc(sizeof(double[nz][nx]));
    for (long k = 0; k < nz; k++)
        for (long i = 0; i < nx; i++)
            u[k][i] = (double)(k * nx + i);
    double s = 0;
    for (long k = 0; k < nz; k++)
        for (long i = 0; i < nx; i++) {
            long lo = k > 1 ? -2 : -k, hi = k < nz - 2 ? 2 : nz - 1 - k;
            for (long o = lo; o <= hi; o++)
                s += u[k + o][i];
        }
    printf("%.1f\\n", s);
    free(u);
    return 0;
}
"""


def test_plane_strided_hints_stay_within_the_loops_run(tmp_path):
    exe = build(tmp_path, PLANES)
    base = build(tmp_path, PLANES, "--no-prefetch")
    nz, nx = 64, 1024   # planes of 8 KiB: the o loop strides a page or more
    out, stats = run_stats(exe, str(nz), str(nx), **CHECKED_AT_HINT)
    assert out == subprocess.run([str(base), str(nz), str(nx)], capture_output=True,
                                 text=True).stdout
    s = site(stats, "u[k + o][i]")
    # At most the o loop's own five planes per run; a look-ahead window of d planes per
    # run (d = 4 MiB / 4 KiB) would consider hundreds of calls per (k, i).
    assert s["considered"] <= 6 * nz * nx, s
    assert s["bad_input"] <= nz, s   # predictions past the array's end: ignored, counted


ZLINES = """
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    (void)argc;
    long nz = atol(argv[1]), ny = atol(argv[2]), nx = atol(argv[3]);
    double (*x)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < nx; i++)
                x[k][j][i] = (double)(k + j + i);
    double s = 0;
    for (long j = 0; j < ny; j++)
        for (long ii = 0; ii < nx; ii += 16) {
            int nb = nx - ii < 16 ? (int)(nx - ii) : 16;
            for (long k = 0; k < nz; k++)
                for (int i = 0; i < nb; i++)
                    s += x[k][j][ii + i];
        }
    printf("%.1f\\n", s);
    free(x);
    return 0;
}
"""


def test_short_runs_follow_the_jump_between_runs(tmp_path):
    exe = build(tmp_path, ZLINES)
    base = build(tmp_path, ZLINES, "--no-prefetch")
    nz, ny, nx = 64, 8, 512      # planes of 32 KiB; runs of 16 elements (128 bytes)
    args = [str(nz), str(ny), str(nx)]
    out, stats = run_stats(exe, *args, **CHECKED_AT_HINT)
    assert out == subprocess.run([str(base), *args], capture_output=True, text=True).stdout
    (walk,) = [s for s in stats["sites"] if s["ref"] == "x[k][j][ii + i]"]
    runs = nz * ny * (nx // 16)
    # One hint per run once the jump is known (plus a prolog per new jump), never a
    # window of d granules per run.
    assert walk["considered"] <= 2 * runs, walk
    assert walk["bad_input"] <= nz, walk


BUCKET_FILL = """
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    (void)argc;
    long n = atol(argv[1]);
    int *key = malloc((size_t)n * sizeof *key);
    int *out = malloc((size_t)n * sizeof *out);
    long *pos = malloc(64 * sizeof *pos);
    long count[64] = {0};
    for (long i = 0; i < n; i++) { key[i] = (int)((i * 7919) % 64); count[key[i]]++; }
    pos[0] = 0;
    for (int k = 1; k < 64; k++) pos[k] = pos[k - 1] + count[k - 1];
    for (long i = 0; i < n; i++)
        out[pos[key[i]]++] = key[i];
    long s = 0;
    for (long i = 0; i < n; i++) s = s * 31 + out[i];
    printf("%ld\\n", s);
    free(key); free(out); free(pos);
    return 0;
}
"""


def test_bucket_fill_through_a_small_table_is_prefetched_bounds_checked(tmp_path):
    # out[pos[key[i]]++]: the look-ahead reads key[i + d], then pos[] only when that
    # value indexes inside pos's 64 elements, and prefetches the output page.
    nests = report(tmp_path, BUCKET_FILL)
    hints = [h for nest in nests for h in nest.get("hints", [])]
    (out,) = [h for h in hints if h["ref"] == "out[pos[key[i]]++]"]
    assert (out["pipelining_loop"], out["indirect_index"], out["indirect_through"]) == (
        "i", "key[i]", "pos[key[i]]")
    # key[i] runs a stream's distance beyond the look-ahead loads that read it
    assert any(h["feeds_indirect"] and h["distance_rule"]["lead"] == LEAD_DS_DI
               for h in hints if h["ref"] == "key[i]")
    exe = build(tmp_path, BUCKET_FILL)
    plain = build(tmp_path, BUCKET_FILL, "--no-prefetch")
    n = str(1 << 20)
    out, stats = run_stats(exe, n, **CHECKED_AT_HINT)
    assert out == subprocess.run([str(plain), n], check=True, capture_output=True,
                                 text=True).stdout
    s = site(stats, "out[pos[key[i]]++]")
    assert s["considered"] > 0 and s["bad_input"] == 0


def test_two_level_index_through_a_table_of_unknown_size_is_not_prefetched(tmp_path):
    nests = report(tmp_path, """
void f(double *a, const long *t, const int *key, long n, double *big)
{
    for (long i = 0; i < n; i++)
        big[t[key[i]]] += a[i];
}
""")
    (nest,) = nests
    assert "big[t[key[i]]]" in {r["ref"] for r in nest["references"]}
    assert "big[t[key[i]]]" not in {h["ref"] for h in nest["hints"]}
    # t is of unknown size: nothing is read through it (t[key[i]] is a one-level
    # indirect reference of its own)
    assert all(h["indirect_through"] is None for h in nest["hints"])


ROW_POINTERS = """
#include <stdio.h>
#include <stdlib.h>
struct vec { long n; double *q; };
static double total(double **A, long n, long m)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++)
            s += A[i][j];
    return s;
}
static double vsum(const struct vec *v)
{
    double s = 0;
    for (long k = 0; k < v->n; k++)
        s += v->q[k];
    return s;
}
int main(int argc, char **argv)
{
    (void)argc;
    long n = atol(argv[1]), m = atol(argv[2]);
    double **A = calloc((size_t)n, sizeof *A);
    for (long i = 0; i < n; i++) {
        A[i] = malloc((size_t)m * sizeof **A);
        for (long j = 0; j < m; j++)
            A[i][j] = (double)((i * 3 + j) % 11);
    }
    struct vec v = { m, A[n / 2] };
    printf("%.1f %.1f\\n", total(A, n, m), vsum(&v));
    return 0;
}
"""


def test_row_pointers_and_pointer_members_are_prefetched_per_row(tmp_path):
    # A[i][j] of double **A: the hints read the row pointer A[i] where the loop does and
    # stream along the row; p->q[k] likewise with its pointer member.
    nests = {n["function"]: n for n in report(tmp_path, ROW_POINTERS)}
    assert predicates(nests["total"]) == {"A[i][j]": "j mod 512 == 0"}
    # A stream along each row released behind itself, and the rows ahead across i read
    # from their row pointers.
    assert row_hints(nests["total"]) == [("A[i][j]", "j", "A[i][j]", None),
                                         ("A[i][j]", "i", None, "j")]
    assert predicates(nests["vsum"]) == {"v->q[k]": "k mod 512 == 0"}
    assert row_hints(nests["vsum"]) == [("v->q[k]", "k", "v->q[k]", None)]
    exe = build(tmp_path, ROW_POINTERS)
    plain = build(tmp_path, ROW_POINTERS, "--no-prefetch")
    n, m = "48", str(1 << 16)   # rows of 512 KiB, each its own mapping
    expected = subprocess.run([str(plain), n, m], check=True, capture_output=True,
                              text=True).stdout
    out, stats = run_stats(exe, n, m, FORESIGHT_LOOKAHEAD="2M", **CHECKED_AT_HINT)
    assert out == expected
    (init, rows) = [s for s in stats["sites"] if s["ref"] == "A[i][j]"]
    (ahead,) = [s for s in stats["sites"] if s["ref"] == "A[i][j] (rows ahead)"]
    for s in (init, rows, ahead):
        # Every address hinted is inside a mapping: a stale or wrong row pointer, or a
        # hint past a row's end, would point elsewhere.  (How many calls are made depends
        # on how soon the site goes quiet, its pages being resident here.)
        assert s["considered"] > 0 and s["bad_input"] == 0, s
    assert site(stats, "v->q[k]")["considered"] > 0
    # Rows longer than the look-ahead: the next row would be asked for a whole row
    # early, so only the stream along each row hints it.
    out, stats = run_stats(exe, n, m, FORESIGHT_LOOKAHEAD="256K", **CHECKED_AT_HINT)
    assert out == expected
    assert not [s for s in stats["sites"]
                if s["ref"] == "A[i][j] (rows ahead)" and s["considered"]]
    assert all(s["considered"] > 0 and s["bad_input"] == 0
               for s in stats["sites"] if s["ref"] == "A[i][j]")


def predicates(nest: dict) -> dict[str, str]:
    return {r["ref"]: r["predicate"] for r in nest["references"]}


def row_hints(nest: dict) -> list[tuple]:
    """(reference, pipelining loop, released behind, rows ahead along) of each hint."""
    return [(h["ref"], h["pipelining_loop"], h["release"], h["rows_ahead_along"])
            for h in nest["hints"]]


def test_row_pointer_the_loop_may_not_read_is_left_alone(tmp_path):
    nests = {n["line"]: n for n in report(tmp_path, """
double f(double **A, long n, long m, long stop, double **T)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j <= i; j++)
            s += T[i][j];
    for (long i = 0; i <= n; i++)
        for (long j = 0; j < m; j++) {
            if (i == stop)
                break;
            s += A[i][j];
        }
    for (long i = 0; i <= n; i++)
        for (long j = 0; j < m; j++)
            if (i < n)
                s += A[i][j];
    for (long i = 0; i + 1 < n; i++)
        for (long j = 0; j < m; j++) {
            s += A[i][j];
            if (j == m / 2) { double *t = A[i]; A[i] = A[i + 1]; A[i + 1] = t; }
        }
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++)
            s += A[i][0] * (double)j;
    for (long i = 0; i < n; i++) {
        if (!A[i])
            continue;
        for (long j = 0; j < m; j++)
            s += A[i][j];
    }
    return s;
}
""")}
    # Every A[i][j] is analysed; those the hints may not read the base of are not hinted:
    # the loop can leave early (line 8), the reference is conditional (14), pointers are
    # stored through memory in the row loop (18, where only A[i + 1] is), and A[i][0]
    # reads a new base every iteration of i with nothing along the row (23).
    assert all("A[i][j]" in predicates(nests[line]) for line in (8, 14, 18))
    assert "A[i][0]" in predicates(nests[23])
    assert [row_hints(nests[line]) for line in (8, 14, 23)] == [[], [], []]
    assert row_hints(nests[18]) == [("A[i + 1]", "i", "A[i]", None)]
    # Rows skipped by the row loop (26): the stream along each row read stays, but no
    # row pointer is read ahead.
    assert ("A[i][j]", "j", "A[i][j]", None) in row_hints(nests[26])
    assert all(h["rows_ahead_along"] is None for h in nests[26]["hints"])
    # Triangular rows (5): each row ahead's extent is evaluated for that row.
    assert predicates(nests[5]) == {"T[i][j]": "j mod 512 == 0"}
    assert row_hints(nests[5]) == [("T[i][j]", "j", "T[i][j]", None),
                                   ("T[i][j]", "i", None, "j")]


def test_a_base_read_from_memory_needs_one_unconditional_reference_of_its_group(tmp_path):
    nests = {n["line"]: n for n in report(tmp_path, """
struct particles { double *x, *v; long n; };
void drift(struct particles *p, double dt)
{
    for (long i = 0; i < p->n; i++) {
        p->x[i] += dt * p->v[i];
        if (p->x[i] < 0.0) p->x[i] = -p->x[i];
    }
    for (long i = 0; i < p->n; i++)
        if (p->v[i] < 0.0) p->x[i] = -p->x[i];
}
""")}
    # The first loop reads p->x on every iteration (line 6): the conditional copies of
    # the reference beside it do not stop the hints from loading the base.  In the
    # second, p->x is read only under the condition.
    assert {h["ref"] for h in nests[5]["hints"]} == {"p->x[i]", "p->v[i]"}
    assert [h["ref"] for h in nests[9]["hints"]] == ["p->v[i]"]
    assert any("p->x[i]: not prefetched: its base p->x is read from memory and the "
               "reference is conditional" in d for d in nests[9]["decisions"])


def test_row_array_in_a_struct_with_member_bounds_is_streamed(tmp_path):
    # g->rows[i][j]: the row array is a pointer member of an invariant g, and the loop
    # bounds are members too (the loop evaluates them every iteration, so the hints may
    # evaluate them again to stop at the row's end).
    code = """
#include <stdio.h>
#include <stdlib.h>
struct matrix { long n, m; double **rows; };
static double total(const struct matrix *g)
{
    double s = 0;
    for (long i = 0; i < g->n; i++)
        for (long j = 0; j < g->m; j++)
            s += g->rows[i][j];
    return s;
}
int main(int argc, char **argv)
{
    (void)argc;
    struct matrix g = { atol(argv[1]), atol(argv[2]), NULL };
    g.rows = calloc((size_t)g.n, sizeof *g.rows);
    for (long i = 0; i < g.n; i++) {
        g.rows[i] = malloc((size_t)g.m * sizeof(double));
        for (long j = 0; j < g.m; j++)
            g.rows[i][j] = (double)(i ^ j);
    }
    printf("%.1f\\n", total(&g));
    return 0;
}
"""
    (total,) = [n for n in report(tmp_path, code) if n["function"] == "total"]
    assert predicates(total) == {"g->rows[i][j]": "j mod 512 == 0"}
    # Bounds on members the nest never assigns, with no call in the row loop that could
    # change them: the rows ahead are read too, the bounds evaluated where the hint runs.
    assert row_hints(total) == [("g->rows[i][j]", "j", "g->rows[i][j]", None),
                                ("g->rows[i][j]", "i", None, "j")]
    exe = build(tmp_path, code)
    plain = build(tmp_path, code, "--no-prefetch")
    out, stats = run_stats(exe, "16", "70000", **CHECKED_AT_HINT)
    assert out == subprocess.run([str(plain), "16", "70000"], check=True,
                                 capture_output=True, text=True).stdout
    for ref in ("g->rows[i][j]", "g->rows[i][j] (rows ahead)"):
        s = site(stats, ref)
        assert s["considered"] > 0 and s["bad_input"] == 0, s


def test_rows_ahead_with_member_bounds_needs_a_row_loop_without_calls(tmp_path):
    (nest,) = report(tmp_path, """
struct matrix { long n, m; double **rows; };
void touch(struct matrix *g, long i);
double f(struct matrix *g)
{
    double s = 0;
    for (long i = 0; i < g->n; i++) {
        touch(g, i);
        for (long j = 0; j < g->m; j++)
            s += g->rows[i][j];
    }
    return s;
}
""")
    # i's body calls a function defined elsewhere: it may change the member bound, and it
    # may synchronise with other threads, so no row pointer is read ahead either way (the
    # reference is left out, with a problem on its loop)
    assert all(h["rows_ahead_along"] is None for h in nest["hints"])
    assert "g->rows[i][j]" not in predicates(nest)
    assert [lp["var"] for lp in nest["loops"] if lp["problems"]] == ["j"]


SUBROWS = """
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    (void)argc;
    long rows = atol(argv[1]), cols = atol(argv[2]), w = atol(argv[3]);
    /* Untouched zero pages: the sum's hints find nothing resident and ask for them all. */
    double (*a)[cols] = calloc((size_t)rows, sizeof(double[cols]));
    a[rows - 1][w - 1] = 1.0;
    double s = 0;
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < w; j++)
            s += a[i][j];
    printf("%.1f\\n", s);
    free(a);
    return 0;
}
"""


def test_pipelining_loop_is_chosen_at_nest_entry(tmp_path):
    # The sum's j loop runs w iterations, known only at run time: hints for both
    # candidates, i (when j touches less than a block) and j, and the entry takes one.
    line = SUBROWS.splitlines().index("    for (long i = 0; i < rows; i++)") + 1
    sums = [n for n in report(tmp_path, SUBROWS) if n["line"] == line]
    hints = sums[0]["hints"]
    assert [(h["pipelining_loop"], h["version"]) for h in hints] == [
        ("j", {"taken": 0, "moves": ["j"]}), ("i", {"taken": 1, "moves": ["j"]})]
    exe = build(tmp_path, SUBROWS)
    rows, cols = 512, 8192          # 64 KiB rows, 32 MiB
    for w, along_i in ((4, True), (cols, False)):
        out, stats = run_stats(exe, str(rows), str(cols), str(w), FORESIGHT_LOOKAHEAD="1M")
        assert out.strip() == "1.0"
        # Each site is at the top of its loop's body: across i on j's line, across j below.
        (used,) = [s for s in stats["sites"] if s["line"] in (line + 1, line + 2)]
        assert used["ref"] == ("a[i][j] (across i)" if along_i else "a[i][j] (across j)")
        if along_i:
            # 32 bytes of each 64 KiB row: its page, not a block per row.
            assert 0 < used["pages_requested"] <= 2 * rows, used


WALKS = """
#include <stdio.h>
#include <stdlib.h>
static double total(const double *b, const double *e)
{
    double s = 0;
    for (const double *p = b; p != e; ++p)
        s += *p;
    return s;
}
int main(int argc, char **argv)
{
    (void)argc;
    long n = atol(argv[1]);
    /* Untouched zero pages: nothing is resident before the walks' hints ask for it. */
    double *a = calloc((size_t)n + 1, sizeof *a);
    double *q;
    for (q = a + n; q > a; q -= 2)
        *(q - 1) = 1.0;
    double t = 0;
    for (double *p = a; p < a + n; p += 2)
        t += p[0] - *(p + 1);
    printf("%.1f %.1f\\n", total(a, a + n), t);
    free(a);
    return 0;
}
"""


def test_pointer_walks_are_pipelined_along_the_pointer(tmp_path):
    nests = report(tmp_path, WALKS)
    hints = {h["ref"]: h for n in nests for h in n.get("hints", [])}
    assert hints["*p"]["pipelining_loop"] == "p"
    # The variable stands for the address: a byte per unit, stepping a double's 8 bytes.
    walk = next(lp for n in nests for lp in n["loops"] if lp["var"] == "p" and lp["step"] == 8)
    assert walk["bound"] == "< e"       # p != e: it stops at e exactly
    assert hints["*(q - 1)"]["pipelining_loop"] == "q"
    assert hints["*(p + 1)"]["release"] == "p[0]"      # a group: p[0] trails *(p + 1)
    exe = build(tmp_path, WALKS)
    n = 1 << 21                                          # 16 MiB
    out, stats = run_stats(exe, str(n))
    plain, _ = run_stats(exe, str(n), FORESIGHT_DISABLE="1")
    assert out == plain == f"{n / 2:.1f} {-n / 2:.1f}\n"
    # The backward walk writes every other double: every page of a is asked for.
    assert site(stats, "*(q - 1)")["pages_requested"] >= n * 8 // 4096
    assert site(stats, "*p")["considered"] > 0


FORCED = "__attribute__((__always_inline__)) __inline__"


def test_a_static_function_only_a_copied_nest_calls_is_forced_inline(tmp_path):
    """gcc inlines a `static` function called once whatever its size, and not once the
    nest's unhinted copy calls it a second time (a particle pusher ran 11-14% slower in
    memory): such a function is forced inline, unless forcing could fail the build or
    cost the compiler much (variadic, recursive, setjmp, named twice, large)."""
    code = r"""
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
static jmp_buf env;
static void step(double *a, long n) { long i; for (i = 0; i < n; i++) a[i] += 1.0; }
static double vsum(int n, ...)
{
    va_list ap;
    double s;
    va_start(ap, n);
    s = va_arg(ap, double);
    va_end(ap);
    return s + n;
}
static long rec(long k) { return k > 0 ? rec(k - 1) + 1 : 0; }
static int guarded(void) { return setjmp(env); }
static double twice(double x) { return 2 * x; }
static double (*const also)(double) = twice;
static double big(const double *a, long n)
{
    double s = 0;
    long i;
    BODY
    return s;
}
int main(void)
{
    long n = 1 << 16, i;
    double *a = calloc(n, sizeof *a);
    double t = 0;
    int s;
    for (s = 0; s < 3; s++) {
        step(a, n);
        t += vsum(1, a[s]) + rec(s) + guarded() + twice(a[s]) + big(a, n);
        for (i = 0; i < n; i++)
            t += a[i];
    }
    printf("%.1f %.1f\n", t, also(1.0));
    free(a);
    return 0;
}
""".replace("BODY", "\n    ".join(f"for (i = 0; i < n; i++) s += a[i] * {k};"
                                      for k in range(30)))
    src = tmp_path / "prog.c"
    src.write_text(code)
    out = transform(src, [], CompileOptions())
    forced = [line for line in out.text.splitlines() if FORCED in line]
    assert len(forced) == 1 and forced[0].startswith(f"static {FORCED} void step("), forced
    (nest,) = [e for e in out.report if e.get("function") == "main" and e.get("hints")]
    assert [f["function"] for f in nest["forced_inline"]] == ["step"]
    assert "step (static, line 7) forced inline" in format_report(out.report)
    # It builds under strict warnings and computes what the original does.
    for std in ("-std=gnu99", "-std=c11"):
        exe = build(tmp_path, code, std, "-pedantic")
        plain = tmp_path / "plain"
        subprocess.run(["cc", "-O1", std, str(src), "-o", str(plain)], check=True)
        assert subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout \
            == subprocess.run([str(plain)], capture_output=True, text=True,
                              check=True).stdout
        # The hinted executable holds no out-of-line step (gcc inlined both calls).
        syms = subprocess.run(["nm", str(exe)], capture_output=True, text=True).stdout
        assert " step" not in syms


def test_no_forced_inline_without_a_copy(tmp_path):
    """A nest that runs one version calls each function once: nothing is forced."""
    out = transform_text(tmp_path, """
static void step(double *a, long n) { for (long i = 0; i < n; i++) a[i] += 1.0; }
void f(double *a, long n)
{
    for (int s = 0; s < 3; s++) {
        static int calls;
        calls++;
        step(a, n);
        for (long i = 0; i < n; i++)
            a[i] *= 2;
    }
}
""")
    assert FORCED not in out.text


def transform_text(tmp_path: Path, code: str):
    src = tmp_path / "t.c"
    src.write_text(code)
    return transform(src, [], CompileOptions())


STEP_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
DEFINITION
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000, i;
    double *a = calloc(n, sizeof *a), t = 0;
    int s;
    for (s = 0; s < 5; s++) {
        step(a, n);
        for (i = 0; i < n; i++)
            t += a[i];
    }
    printf("%.1f\n", t);
    free(a);
    return 0;
}
"""


def forced_names(tmp_path: Path, definition: str, **opts) -> list[str]:
    src = tmp_path / "s.c"
    src.write_text(STEP_PROGRAM.replace("DEFINITION", definition))
    out = transform(src, [], CompileOptions(**opts))
    return [f["function"] for e in out.report for f in e.get("forced_inline", [])]


def test_what_inlining_would_change_or_gcc_refuses_is_not_forced(tmp_path):
    step = "static void step(double *a, long n) { long i; %s for (i = 0; i < n; i++) a[i] += 1; }"
    assert forced_names(tmp_path, step % "") == ["step"]
    # A comment naming it is no mention; a string (an alias) is.
    assert forced_names(tmp_path, "/* step: one time step */\n" + step % "") == ["step"]
    for body in ('double *t = __builtin_alloca(64); t[0] = 0;',   # freed only at return
                 '__asm__ volatile("" ::: "memory");',            # labels would repeat
                 'double big[64]; big[0] = 0; (void)big;',        # frame > 256 bytes
                 '((char[512]){0})[0] += 1;',                     # a literal counts too
                 'if (n < 0) __builtin_longjmp(0, 1);'):          # gcc refuses
        assert forced_names(tmp_path, step % body) == [], body
    assert forced_names(tmp_path, "#define STATIC static\nSTATIC" + (step % "")[6:]) == []
    alias = '\nvoid other(void) __attribute__((alias("step")));'
    assert forced_names(tmp_path, step % "" + alias) == []
    assert forced_names(tmp_path, '_Pragma("GCC target \\"avx2\\"")\n' + step % "") == []
    # Only where cc inlines functions called once (not -O0, -Og, -fno-inline, -flto).
    assert forced_names(tmp_path, step % "", inline_once=False) == []


def test_inlining_of_functions_called_once_is_read_from_the_flags():
    from foresight.driver.args import inlines_called_once

    assert inlines_called_once(["-O2"]) and inlines_called_once(["-O3", "-g"])
    assert inlines_called_once(["-Os"]) and inlines_called_once(["-O"])
    assert not inlines_called_once([]) and not inlines_called_once(["-O2", "-O0"])
    assert not inlines_called_once(["-Og"]) and not inlines_called_once(["-O2", "-fno-inline"])
    assert not inlines_called_once(["-O2", "-fno-inline-functions-called-once"])
    assert not inlines_called_once(["-O2", "-flto"])
    assert inlines_called_once(["-O2", "-flto=auto", "-fno-lto"])


def test_a_forced_inline_cc_rejects_is_dropped_not_the_hints(tmp_path):
    """An attribute the text does not show (a header's macro: `noipa`) conflicts with the
    forced inline: cc rejects the text, and the driver compiles it without the forced
    inline, hints kept, silently, before it would fall back to the original."""
    (tmp_path / "attrs.h").write_text("#define NOIPA __attribute__((noipa))\n")
    code = STEP_PROGRAM.replace("DEFINITION", '#include "attrs.h"\nstatic NOIPA void '
                                "step(double *a, long n) { long i; for (i = 0; i < n; i++) "
                                "a[i] += 1; }")
    src = tmp_path / "prog.c"
    src.write_text(code)
    exe = tmp_path / "prog"
    r = subprocess.run([str(FORESIGHT), "cc", "-O2", "-Wall", "-Wextra", "-Werror", "--report",
                        str(src), "-o", str(exe)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "not forced inline: cc refused it" in r.stdout + r.stderr   # said in --report
    assert "did not compile" not in r.stderr           # no fallback to the original
    syms = subprocess.run(["nm", str(exe)], capture_output=True, text=True).stdout
    assert " step" in syms                             # noipa honoured
    assert "foresight__nest_enter" in syms             # the hints are there
    plain = tmp_path / "plain"
    subprocess.run(["cc", "-O2", str(src), "-o", str(plain)], check=True, cwd=tmp_path)
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout == \
        subprocess.run([str(plain)], capture_output=True, text=True).stdout


def test_a_csr_row_after_the_last_continues_its_streams_countdown(tmp_path):
    """Row i + 1 of a CSR matrix starts where row i ended: its streams (col[k], val[k])
    keep counting down instead of restarting, one library step per granule rather
    than per row; a row loop that skips rows or a stream that moves with i restarts."""
    code = r"""
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    long n = 200000, nnz = 0, i, k;
    int *rp = malloc((n + 1) * sizeof *rp), *col;
    double *val, *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), t = 0;
    rp[0] = 0;
    for (i = 0; i < n; i++)
        rp[i + 1] = rp[i] + 1 + (int)(i % 13);
    nnz = rp[n];
    col = malloc(nnz * sizeof *col);
    val = malloc(nnz * sizeof *val);
    for (k = 0; k < nnz; k++) {
        col[k] = (int)((k * 7919) % n);
        val[k] = 1.0 / (1 + k % 7);
    }
    for (i = 0; i < n; i++)
        x[i] = i % 5;
    for (i = 0; i < n; i++) {
        double s = 0;
        for (k = rp[i]; k < rp[i + 1]; k++)
            s += val[k] * x[col[k]];
        y[i] = s;
    }
    for (i = 0; i < n; i += 2) {
        double s = 0;
        for (k = rp[i]; k < rp[i + 1]; k++)
            s += val[k];
        y[i] += s;
    }
    for (i = 0; i < n; i++)
        t += y[i];
    printf("%.6f\n", t);
    return 0;
}
"""
    src = tmp_path / "prog.c"
    src.write_text(code)
    text = transform(src, [], CompileOptions()).text
    # Per CSR nest: declared at entry, tested and set at each row (a row loop stepping
    # by 2 never passes the test: its rows always restart).
    assert text.count("__fs_row_") == 6, text.count("__fs_row_")
    assert "!= __fs_row_" in text and "+ 1) __fs_pc_" in text
    exe = build(tmp_path, code)
    plain = tmp_path / "plain"
    subprocess.run(["cc", "-O1", str(src), "-o", str(plain)], check=True)
    out, _ = run_stats(exe)
    assert out == subprocess.run([str(plain)], capture_output=True, text=True,
                                 check=True).stdout


def test_a_forced_inline_before_the_includes_leaves_the_header_after_them(tmp_path):
    """The attribute needs no header: a static function defined above the file's
    #includes must not pull the runtime's header above its feature test macros (without
    _GNU_SOURCE, canonicalize_file_name went undeclared, its pointer cut to an int)."""
    code = (tmp_path / "a.c")
    code.write_text("""#define _GNU_SOURCE
static void step(double *a, long n) { a[n / 2] += 1.0; }
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000, i;
    double *a = calloc(n, sizeof *a), t = 0;
    int s;
    char *p;
    for (s = 0; s < 5; s++) {
        step(a, n);
        for (i = 0; i < n; i++)
            t += a[i];
    }
    p = canonicalize_file_name(argv[0]);
    printf("%.1f %d\\n", t, p != NULL && strlen(p) > 0);
    free(p);
    free(a);
    return 0;
}
""")
    text = transform(code, [], CompileOptions()).text
    assert FORCED in text
    assert text.index("foresight.h") > text.index("#include <string.h>")
    exe = tmp_path / "a"
    subprocess.run([str(FORESIGHT), "cc", "-std=c99", "-O2", "-Wall", "-Werror", str(code),
                    "-o", str(exe)], check=True, cwd=tmp_path)
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout == "15.0 1\n"


FEATURE_PROGRAM = """#define _GNU_SOURCE HEAD
#include <stdio.h>   STDIO
#include <stdlib.h>  STDLIB
#include <string.h>  STRING
int main(void)
{
    long n = 1L << 21;
    double *a = malloc(n * sizeof *a), s = 0;
    char *text = malloc(64);
    for (long i = 0; i < n; i++)
        a[i] = (double)(i % 3);
    for (long i = 0; i < n; i++)
        s += a[i];
    strcpy(text, "sum of the Column: ");
    printf("%s%g\\n", strcasestr(text, "column"), s);
    return 0;
}
"""


@pytest.mark.parametrize("comments, after", [
    # comments closed on their lines: after the last #include (a helper's probe: all
    # three skipped put the header on line 1, strcasestr() undeclared, a crash)
    (("", "/* printf */", "/* malloc */", "/* strcasestr */ // and memmem"),
     "#include <string.h>"),
    # comments left open after each #include: after the #define
    (("", "/* printf\n   and more */", "/* malloc\n */", "/* x\n*/"), "#define _GNU_SOURCE"),
    # nowhere: compiled as written, said in the report
    (("/* all\n of it */", "/* printf\n   and more */", "/* malloc\n */", "/* x\n*/"), None),
])
def test_the_header_goes_after_the_feature_macros_or_nowhere(tmp_path, comments, after):
    code = tmp_path / "f.c"
    text = FEATURE_PROGRAM
    for mark, c in zip(("HEAD", "STDIO", "STDLIB", "STRING"), comments, strict=True):
        text = text.replace(mark, c)
    code.write_text(text)
    t = transform(code, [], CompileOptions())
    if after is None:
        assert not t.changed
        assert any("feature test macro" in e.get("unchanged_reason", "") for e in t.report)
    else:
        assert t.changed
        lines = t.text.splitlines()
        at = next(i for i, line in enumerate(lines) if "foresight.h" in line)
        assert lines[at - 1].startswith(after) or lines[at - 2].startswith(after), lines[:at]
    exe = tmp_path / "f"
    p = subprocess.run([str(FORESIGHT), "cc", "-O2", "-Wall", "-Werror", str(code), "-o",
                        str(exe)], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout == \
        "Column: 2.09715e+06\n"


TRAP_PROGRAM = r"""#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
static void fail(long i) { fprintf(stderr, "bad %ld\n", i); exit(3); }
__attribute__((noreturn)) void die(long i);
static double gather(const double *x, const int *idx, long n, long have) {
    double s = 0;
    for (long i = 0; i < n; i++) {
        if (i >= have) STOP;
        s += x[idx[i]];
    }
    return s;
}
int main(void) {
    long nx = 1L << 23, have = 1L << 18, claimed = have + 100000;
    double *x = malloc(nx * sizeof *x);
    for (long i = 0; i < nx; i++) x[i] = (double)(i % 11);
    size_t bytes = have * sizeof(int), pg = 4096;
    char *m = mmap(NULL, bytes + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(m + bytes, pg);    /* nothing readable after the index table */
    int *idx = (int *)m;
    for (long i = 0; i < have; i++) idx[i] = (int)((i * 7919L * 512) % nx);
    printf("%g\n", gather(x, idx, claimed, have));
    return 0;
}
void die(long i) { fprintf(stderr, "bad %ld\n", i); exit(4); }
"""


@pytest.mark.parametrize("stop", ["fail(i)", "die(i)", "__builtin_trap()"])
def test_the_look_ahead_stops_where_a_call_may_end_the_program(tmp_path, stop):
    # A helper's probe: the index look-ahead read past the mapped table where the loop
    # checks each position and exits (__builtin_trap, a helper calling exit, a noreturn
    # declaration): SIGSEGV instead of the program's own end.
    src = tmp_path / "g.c"
    src.write_text(TRAP_PROGRAM.replace("STOP", stop))
    report = format_report(transform(src, [], CompileOptions()).report)
    assert "indirect not prefetched: the body can leave the loop early" in report or \
        "the index is not loaded ahead" in report
    exe, plain = tmp_path / "g", tmp_path / "plain"
    subprocess.run([str(FORESIGHT), "cc", "-O2", str(src), "-o", str(exe)], check=True)
    subprocess.run(["cc", "-O2", str(src), "-o", str(plain)], check=True)
    env = {**os.environ, "FORESIGHT_INCORE": "hint", "FORESIGHT_FILTER": "0"}
    want = subprocess.run([str(plain)], capture_output=True, text=True)
    got = subprocess.run([str(exe)], capture_output=True, text=True, env=env)
    assert (got.returncode, got.stdout, got.stderr) == \
        (want.returncode, want.stdout, want.stderr)


@pytest.mark.parametrize("lead", [
    'UNROLL4\n    ',                                      # a macro making the pragma
    'HINT\n    // a note\n    ',                         # through another macro
    '_Pragma("GCC unroll 4") ',                          # on the loop's own line
    '_Pragma("GCC unroll 4") /* why */\n    ',            # a comment after it
])
def test_a_pragma_from_a_macro_or_on_the_loops_line_keeps_hints_out(tmp_path, lead):
    # A helper's probe: each of these made the hinted text fail to compile ("for, while
    # or do statement expected"), and the whole file lost its hints with a warning.
    src = tmp_path / "p.c"
    src.write_text('#include <stdio.h>\n#include <stdlib.h>\n'
                   '#define UNROLL4 _Pragma("GCC unroll 4")\n#define HINT UNROLL4\n'
                   'double sum(const double *a, long n) {\n    double s = 0;\n    '
                   f'{lead}for (long i = 0; i < n; i++)\n        s += a[i];\n'
                   '    return s;\n}\nint main(void) {\n    long n = 1L << 21;\n'
                   '    double *a = calloc(n, sizeof *a);\n    printf("%g\\n", sum(a, n));\n'
                   '    return 0;\n}\n')
    report = format_report(transform(src, [], CompileOptions()).report)
    assert "the nest follows a #pragma" in report
    p = subprocess.run([str(FORESIGHT), "cc", "-O2", "-Wall", "-Werror", str(src), "-o",
                        str(tmp_path / "p")], capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_a_function_two_nests_force_is_forced_once(tmp_path):
    """An outer nest and the nest inside its while loop both hold the call: one attribute."""
    src = tmp_path / "d.c"
    src.write_text(STEP_PROGRAM.replace("DEFINITION", "static void step(double *a, long n) "
                                        "{ a[n / 2] += 1.0; }").replace(
        "        step(a, n);\n", "        int w = 2;\n        while (w--) {\n"
        "            long j;\n            for (j = 0; j < n; j++) {\n"
        "                if (j == 0) step(a, n);\n                t += a[j];\n"
        "            }\n        }\n"))
    text = transform(src, [], CompileOptions()).text
    assert text.count(FORCED) == 1, text.count(FORCED)


def test_openmp_directives_the_text_does_not_show_keep_hints_out(tmp_path):
    """Under -fopenmp a directive from a macro, one with a comment before its loop, and a
    while loop run by a parallel region's team are all seen (a second parse under
    -fopenmp): the nests they hold get no hints, and what is left compiles."""
    code = """
#define PARFOR _Pragma("omp parallel for")
void f(double *a, double *b, long n)
{
    PARFOR
    for (long i = 0; i < n; i++) b[i] = a[i] * 2;
#pragma omp parallel for
    /* a comment
       over two lines */
    for (long i = 0; i < n; i++) a[i] = b[i] + 1;
#pragma omp parallel
    while (n > 0) {
        for (long i = 0; i < n; i++) a[i] += b[i];
        n /= 2;
    }
}
"""
    src = tmp_path / "m.c"
    src.write_text(code)
    omp = transform(src, ["-fopenmp"], CompileOptions())
    assert not omp.changed, omp.text
    nests = {n["line"]: n for n in omp.report if n["loops"]}
    assert set(nests) == {6, 10, 13}
    assert all("OpenMP" in n["skipped"] for n in nests.values()), nests
    # without -fopenmp the three run on one thread: hinted
    plain = transform(src, [], CompileOptions())
    assert plain.changed


GATED_PLANES = """
#include <stdio.h>
#include <stdlib.h>
static double sweep(long nz, long ny, long nx, double (*a)[ny][nx][5])
{
    double s = 0;
    for (long j = 0; j < ny; j++)
        for (long i = 0; i < nx; i++)
            for (long k = 0; k < nz; k++)
                for (int m = 0; m < 5; m++)
                    s += a[k][j][i][m] * (m + 1);
    return s;
}
static double column(long nz, long ny, long nx, double (*a)[ny][nx][5])
{
    double s = 0;
    for (long i = nx - 1; i >= 0; i--)
        for (long k = 0; k < nz; k++)
            s += a[k][2][i][0];
    return s;
}
static double again(long nz, long ny, long nx, double (*a)[ny][nx][5])
{
    double s = 0;
    for (int r = 0; r < 3; r++)
        for (long k = 0; k < nz; k++)
            for (int m = 0; m < 5; m++)
                s += a[k][1][7][m] * (r + 1);
    return s;
}
int main(int argc, char **argv)
{
    (void)argc;
    long nz = atol(argv[1]), ny = 4, nx = 200;
    double (*a)[ny][nx][5] = malloc(sizeof(double[nz][ny][nx][5]));
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < nx; i++)
                for (int m = 0; m < 5; m++)
                    a[k][j][i][m] = (double)((k * 7 + j * 3 + i + m) % 11);
    double s1 = sweep(nz, ny, nx, a);    /* first: its hints find nothing asked for yet */
    double s2 = again(nz, ny, nx, a);
    double s3 = column(nz, ny, nx, a);
    printf("%.1f %.1f %.1f\\n", s1, s2, s3);
    free(a);
    return 0;
}
"""


def test_a_stream_along_planes_steps_once_per_page_of_the_loop_around(tmp_path):
    # a[k][j][i][m] along k (a plane, 32,000 bytes, per iteration) inside i (40 bytes per
    # iteration): the next 101 runs of k touch the pages this one touches or the next
    # ones, so the streams step on one run of k in 102 (the paper's predicate
    # `i mod 102 == 0`), prefetching both groups' pages, while one iteration of i fits
    # in memory; where it does not (FORESIGHT_MEM=1M: 300 planes, 1.2 MB a line), they
    # step on every run, as before.  The output is the original's either way.
    exe = build(tmp_path, GATED_PLANES, "--report-json", "r.json")
    base = build(tmp_path, GATED_PLANES, "--no-prefetch")
    (nest,) = [n for n in json.loads((tmp_path / "r.json").read_text())
               if n["function"] == "sweep"]
    (k,) = [lp for lp in nest["loops"] if lp["var"] == "k"]
    assert k["gated"] == {"around": "i", "every": 102}
    plain = subprocess.run([str(base), "300"], capture_output=True, text=True).stdout
    out, gated = run_stats(exe, "300")
    assert out == plain
    out, every = run_stats(exe, "300", FORESIGHT_MEM="1M")
    assert out == plain
    runs = 4 * 200                      # runs of k: ny * nx
    stepped = site(gated, "a[k][j][i][m]")
    assert 0 < stepped["considered"] <= 300 * 4 * 3   # a window of 300 planes per group
    assert site(every, "a[k][j][i][m]")["considered"] >= runs
    # each gated step asked for both groups' pages: all of the array's were asked for
    assert stepped["pages_requested"] >= 300 * 4 * 200 * 40 // 4096


def test_a_stream_the_loop_around_does_not_move_steps_on_its_first_run(tmp_path):
    # a[k][1][7][m] along k inside r, which does not move it: while one iteration of r
    # fits in memory, the streams step on the first of r's three runs of k only; where
    # it does not (FORESIGHT_MEM=1M), on all three.
    exe = build(tmp_path, GATED_PLANES, "--report-json", "r.json")
    (nest,) = [n for n in json.loads((tmp_path / "r.json").read_text())
               if n["function"] == "again"]
    (k,) = [lp for lp in nest["loops"] if lp["var"] == "k"]
    assert k["gated"] == {"around": "r", "every": None}
    _, once = run_stats(exe, "300")
    _, thrice = run_stats(exe, "300", FORESIGHT_MEM="1M")
    ref = "a[k][1][7][m]"
    assert 0 < site(once, ref)["considered"] <= 300
    assert site(thrice, ref)["considered"] >= 3 * 300 - 3


def test_a_gated_stream_in_a_split_loop_steps_once_per_strip_of_its_group(tmp_path):
    # a[k][2][i][0] along k, an innermost loop split into strips, inside i running
    # downwards (40 bytes per iteration): gated as in the nested form, one run of k in
    # 102 steps, the others run as one strip with no call.
    exe = build(tmp_path, GATED_PLANES, "--report-json", "r.json")
    (nest,) = [n for n in json.loads((tmp_path / "r.json").read_text())
               if n["function"] == "column"]
    (k,) = [lp for lp in nest["loops"] if lp["var"] == "k"]
    assert k["gated"] == {"around": "i", "every": 102}
    assert k["strips"] == "split"
    _, gated = run_stats(exe, "300")
    _, every = run_stats(exe, "300", FORESIGHT_MEM="1M")
    ref = "a[k][2][i][0]"
    assert 0 < site(gated, ref)["considered"] <= 300 * 3
    assert site(every, ref)["considered"] >= 200 * 300 - 300
