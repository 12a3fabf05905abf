"""Nests that only store into memory allocated just before them are left unhinted
(frontend/fresh.py): the kernel gives such pages zero-filled, so there is nothing to
prefetch.  Every other shape of the same code keeps its hints."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from foresight.compiler.options import CompileOptions
from foresight.compiler.pipeline import transform

FORESIGHT = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "foresight"

HEAD = ("#include <setjmp.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
        "static char pool[1 << 20];\n"
        "static void *arena(size_t n) { return n <= sizeof pool ? pool : NULL; }\n")


def nest_at(tmp_path: Path, body: str, line_of: str) -> dict:
    """The report entry of the nest whose first line holds `line_of`."""
    code = HEAD + "int main(int argc, char **argv)\n{\n    (void)argv;\n" + body + "}\n"
    src = tmp_path / "f.c"
    src.write_text(code)
    line = next(n for n, text in enumerate(code.splitlines(), 1) if line_of in text)
    (entry,) = [e for e in transform(src, [], CompileOptions()).report if e["line"] == line]
    return entry


def first_touch(entry: dict) -> bool:
    return (entry.get("skipped") or "").startswith("first touch of new memory")


@pytest.mark.parametrize("alloc", [
    "double *x = malloc(n * sizeof *x);",
    "double *x;\n    x = (double *)malloc(n * sizeof(double));",
    "double *x = calloc(n, sizeof *x);",
    "double *x = aligned_alloc(4096, n * sizeof *x);",
    "double *x;\n    if ((x = malloc(n * sizeof *x)) == NULL) { perror(\"x\"); exit(1); }",
    "double *x = malloc(n * sizeof *x);\n    if (__builtin_expect(!x, 0)) abort();",
])
def test_a_fill_of_new_memory_is_left_alone(tmp_path, alloc):
    e = nest_at(tmp_path, f"""
    long n = 1L << 20 | argc;
    {alloc}
    if (x == NULL) {{ fprintf(stderr, "no memory\\n"); return 1; }}
    for (long i = 0; i < n; i++) x[i] = (double)(i % 7);
    printf("%f\\n", x[n / 2]);
""", "for (long i")
    assert first_touch(e), e
    assert "allocated at line" in e["skipped"] and ": x)" in e["skipped"]


def test_two_arrays_and_a_two_dimensional_view(tmp_path):
    e = nest_at(tmp_path, """
    long n = 1024 + argc, m = 4096;
    double (*A)[m] = malloc(sizeof(double[n][m])), (*B)[m] = malloc(sizeof(double[n][m]));
    if (A == NULL || !B) return 1;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++) { A[i][j] = (double)(i + j); B[i][j] = 0; }
    printf("%f %f\\n", A[n - 1][m - 1], B[0][0]);
""", "for (long i")
    assert first_touch(e), e


def test_row_pointers_stored_into_a_new_table(tmp_path):
    e = nest_at(tmp_path, """
    long n = 100000 + argc;
    double **rows = malloc(n * sizeof *rows);
    for (long i = 0; i < n; i++) rows[i] = malloc(64);
    printf("%p\\n", (void *)rows[n - 1]);
""", "for (long i")
    assert first_touch(e), e


@pytest.mark.parametrize("why, body", [
    ("the nest reads the new memory", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    if (!x) return 1;
    x[0] = 1;
    for (long i = 1; i < n; i++) x[i] = x[i - 1] * 0.5; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("a statement between touches it", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    if (!x) return 1;
    x[0] = 1;
    for (long i = 1; i < n; i++) x[i] = 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("the pointer escapes before the nest", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    printf("%p\\n", (void *)x);
    for (long i = 0; i < n; i++) x[i] = 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("realloc keeps the old contents", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    x = realloc(x, 2 * n * sizeof *x);
    for (long i = 0; i < 2 * n; i++) x[i] = 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("a row pointer is loaded from memory", """
    long n = 1000 + argc, m = 4096;
    double **r = malloc(n * sizeof *r);
    for (long i = 0; i < n; i++) r[i] = malloc(m * sizeof **r);
    double **s = malloc(n * sizeof *s);
    for (long i = 0; i < n; i++) s[i] = r[i];
    for (long i = 0; i < n; i++) /* here */
        for (long j = 0; j < m; j++) s[i][j] = 1;
    printf("%f\\n", r[n - 1][m - 1]);
"""),
    ("a compound assignment reads", """
    long n = 1L << 20 | argc;
    double *x = calloc(n, sizeof *x);
    for (long i = 0; i < n; i++) x[i] += 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("the nest is run again by a loop around it", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    int t = 0;
    while (t++ < 3) {
        for (long i = 0; i < n; i++) x[i] = t; /* here */
    }
    printf("%f\\n", x[n - 1]);
"""),
    ("a label lets a jump run the nest again", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    int again = 1;
again:
    again--;
    for (long i = 0; i < n; i++) x[i] = again; /* here */
    if (again >= 0) goto again;
    printf("%f\\n", x[n - 1]);
"""),
    ("a do loop in the nest stores again", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    for (long i = 0; i < n; i++) { /* here */
        int k = 0;
        do { x[i] = k; } while (++k < 3);
    }
    printf("%f\\n", x[n - 1]);
"""),
    ("the nest reads the new memory, nothing between", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    if (!x) return 1;
    for (long i = 1; i < n; i++) x[i] = x[i - 1] * 0.5; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("a row pointer loaded from new memory, nothing between", """
    long n = 1000 + argc, m = 4096;
    double **s = malloc(n * sizeof *s);
    for (long i = 0; i < n; i++) /* here */
        for (long j = 0; j < m; j++) s[i][j] = 1;
    printf("%p\\n", (void *)s);
"""),
    ("two stores of one array write each element twice", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    for (long i = 0; i < n; i++) { x[i] = 1; x[n - 1 - i] = 2; } /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("a time loop inside a subscript", """
    long n = 1000 + argc, m = 4096;
    double (*u)[m] = malloc(2 * sizeof *u);
    for (long t = 0; t < n; t++) /* here */
        for (long j = 0; j < m; j++) u[t % 2][j] = t;
    printf("%f\\n", u[1][m - 1]);
"""),
    ("rows that overlap", """
    long n = 1000 + argc, m = 4096;
    double *x = malloc(3 * n * m * sizeof *x);
    for (long i = 0; i < n; i++) /* here */
        for (long j = 0; j < m; j++) x[2 * i + j] = j;
    printf("%f\\n", x[n - 1]);
"""),
    ("an inner declaration shadows the row index", """
    long n = 1000 + argc, m = 4096;
    double *x = malloc(n * m * sizeof *x);
    for (long i = 0; i < n; i++) /* here */
        for (long j = 0; j < m; j++) { long i = 0; x[i * m + j] = j; }
    printf("%f\\n", x[n - 1]);
"""),
    ("a variable-length array's sizeof reads it", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    (void)sizeof(char[(int)*x + 1]);
    for (long i = 0; i < n; i++) x[i] = 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("__builtin_setjmp may run the nest again", """
    static void *jb[5];
    static volatile int pass;
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    if (__builtin_setjmp(jb) == 0) pass = 0;
    for (long i = 0; i < n; i++) x[i] = pass; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("the NULL test's branch uses it", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    if (argc > 5) x[0] = 3;
    for (long i = 0; i < n; i++) x[i] = 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("a time loop in the nest stores the same elements again", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    for (int t = 0; t < 3; t++) /* here */
        for (long i = 0; i < n; i++) x[i] = t + i;
    printf("%f\\n", x[n - 1]);
"""),
    ("column order comes back to every page", """
    long n = 4096 + argc, m = 4096;
    double (*A)[m] = malloc(sizeof(double[n][m]));
    for (long j = 0; j < m; j++) /* here */
        for (long i = 0; i < n; i++) A[i][j] = i + j;
    printf("%f\\n", A[n - 1][m - 1]);
"""),
    ("a flat index in column order", """
    long n = 4096 + argc, m = 4096;
    double *x = malloc(n * m * sizeof *x);
    for (long j = 0; j < m; j++) /* here */
        for (long i = 0; i < n; i++) x[i * m + j] = 1;
    printf("%f\\n", x[n - 1]);
"""),
    ("setjmp may run the nest again", """
    static jmp_buf jb;
    static volatile int pass;
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    if (setjmp(jb) == 0) pass = 0;
    for (long i = 0; i < n; i++) x[i] = pass; /* here */
    if (++pass < 3) longjmp(jb, 1);
    printf("%f\\n", x[n - 1]);
"""),
    ("an allocator reached through a pointer", """
    void *(*malloc)(size_t) = arena;
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    for (long i = 0; i < n; i++) x[i] = 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("a variable-length array's sizeof calls", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    (void)sizeof(char[(memset(x, 1, n * sizeof *x), 1)]);
    for (long i = 0; i < n; i++) x[i] = 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("the allocating test's branch stores into it", """
    long n = 1L << 20 | argc;
    double *x;
    if ((x = malloc(n * sizeof *x)) != NULL) x[0] = 3;
    for (long i = 0; i < n; i++) x[i] = 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("the allocating test reads memory", """
    long n = 1L << 20 | argc;
    double *x;
    if ((x = malloc(n * sizeof *x)) == NULL || argv[0][0] == 0) return 1;
    for (long i = 0; i < n; i++) x[i] = 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
    ("a statement in the NULL test", """
    long n = 1L << 20 | argc;
    double *x = malloc(n * sizeof *x);
    if (({ __asm__ volatile("" : : "r"(x) : "memory"); 0; }) || !x) return 1;
    for (long i = 0; i < n; i++) x[i] = 2; /* here */
    printf("%f\\n", x[n - 1]);
"""),
])
def test_memory_that_may_have_been_touched_keeps_its_hints(tmp_path, why, body):
    e = nest_at(tmp_path, body, "/* here */")
    assert not first_touch(e), (why, e)


def test_left_alone_nest_gives_the_same_output(tmp_path):
    code = HEAD + """
int main(int argc, char **argv)
{
    long n = atol(argv[1]), m = 512;
    double (*A)[m] = malloc(sizeof(double[n][m])), (*B)[m] = malloc(sizeof(double[n][m]));
    if (A == NULL || B == NULL) return 2;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++) { A[i][j] = (double)((i * 31 + j) % 101); B[i][j] = 0; }
    double s = 0;
    for (long i = 1; i < n - 1; i++)
        for (long j = 1; j < m - 1; j++) { B[i][j] = A[i - 1][j] + A[i + 1][j]; s += B[i][j]; }
    printf("%d %.1f\\n", argc, s);
    return 0;
}
"""
    src = tmp_path / "s.c"
    src.write_text(code)
    outs = []
    for flag in ("--no-prefetch", "--report"):
        exe = tmp_path / f"s{len(outs)}"
        r = subprocess.run([str(FORESIGHT), "cc", "-O2", flag, "-o", str(exe), str(src)],
                           capture_output=True, text=True, check=True)
        if flag == "--report":
            assert "1 first touch of new memory" in r.stderr, r.stderr
        outs.append(subprocess.run([str(exe), "3000"], capture_output=True, text=True,
                                   check=True).stdout)
    assert outs[0] == outs[1] and outs[0].startswith("2 ")
