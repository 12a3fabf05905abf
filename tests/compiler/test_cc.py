"""foresight cc as a drop-in compiler: builds, errors, dependency files, identical results."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")


def cc(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([FORESIGHT, "cc", *args], cwd=cwd, capture_output=True, text=True)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def test_make_builds_a_multi_file_project(tmp_path):
    (tmp_path / "vec.h").write_text("double total(const double *a, long n);\n")
    (tmp_path / "vec.c").write_text(
        '#include "vec.h"\n'
        "double total(const double *a, long n) {\n"
        "  double s = 0;\n  for (long i = 0; i < n; i++)\n    s += a[i];\n  return s;\n}\n")
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include <stdlib.h>\n#include "vec.h"\n'
        "int main(void) {\n  long n = 100000; double *a = malloc(n * sizeof *a);\n"
        "  for (long i = 0; i < n; i++) a[i] = i % 7;\n"
        '  printf("%.0f\\n", total(a, n));\n  free(a);\n  return 0;\n}\n')
    (tmp_path / "Makefile").write_text(
        "prog: main.o vec.o\n\t$(CC) -o $@ main.o vec.o\n"
        "%.o: %.c vec.h\n\t$(CC) -O2 -Wall -Wextra -Werror -MD -c $<\n")
    subprocess.run(["make", f"CC={FORESIGHT} cc"], cwd=tmp_path, check=True,
                   capture_output=True)
    out = subprocess.run(["./prog"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout == f"{sum(i % 7 for i in range(100000))}\n"
    dep = (tmp_path / "vec.d").read_text()
    assert "vec.c" in dep and "vec.h" in dep and "foresight-cc-" not in dep
    # Objects from foresight cc link with plain cc: the hints become no-ops.
    subprocess.run(["cc", "-o", "plain", "main.o", "vec.o"], cwd=tmp_path, check=True)
    out = subprocess.run(["./plain"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout == f"{sum(i % 7 for i in range(100000))}\n"


def test_rejected_program_reports_file_line_and_leaves_no_output(tmp_path):
    (tmp_path / "bad.c").write_text("int main(void) {\n  for (int i = 0; i < 3; i++)\n"
                                    "    x += i;\n  return 0;\n}\n")
    p = cc("bad.c", "-o", "bad", cwd=tmp_path, check=False)
    assert p.returncode != 0
    assert "bad.c:3" in p.stderr
    assert not (tmp_path / "bad").exists()


def test_bad_option_value_is_a_clear_error(tmp_path):
    (tmp_path / "a.c").write_text("int main(void) { return 0; }\n")
    p = cc("--fs-mem", "lots", "a.c", cwd=tmp_path, check=False)
    assert p.returncode == 2 and "--fs-mem" in p.stderr


def test_report_and_emit_c(tmp_path):
    (tmp_path / "k.c").write_text(
        "double A[4096][512];\nint main(void) {\n  double s = 0;\n"
        "  for (int j = 0; j < 512; j++)\n    for (int i = 0; i < 4096; i++)\n"
        "      s += A[i][j];\n  return (int)s;\n}\n")
    p = cc("--report", "--report-json", "r.json", "--emit-c", "out", "-c", "k.c",
           cwd=tmp_path)
    # --report prints to stderr (its wording is tested with the report's own tests);
    # the decision is read from --report-json: a column walk pipelined across i.
    assert "A[i][j]" in p.stderr
    (nest,) = json.loads((tmp_path / "r.json").read_text())
    assert [(h["ref"], h["pipelining_loop"]) for h in nest["hints"]] == [("A[i][j]", "i")]
    text = (tmp_path / "out" / "k.c").read_text()
    assert "foresight_streams_step" in text and '#line 1 "k.c"' in text
    # No line of the user's code moved: every original line is still at its number as
    # cc counts lines (#line directives included), in the hinted nest and in its
    # unhinted copy (the nest's lines twice).
    original = (tmp_path / "k.c").read_text().splitlines()
    at: dict[int, list[str]] = {}
    number = 0
    for line in text.splitlines():
        if m := re.match(r'#line (\d+) "k.c"$', line):
            number = int(m[1])
            continue
        if number:   # not the runtime's #include before the first #line
            at.setdefault(number, []).append(line)
        number += number > 0
    assert sorted(at) == list(range(1, len(original) + 1))
    copies = [sum(line.strip() in e for e in at[n]) for n, line in enumerate(original, 1)]
    assert copies == [1, 1, 1, 2, 2, 2, 1, 1]


TRAPS = {
    # Indirect gather into exactly-sized arrays: the look-ahead load of idx must stay in it.
    "indirect_exact": """
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  int n = 50000; int *idx = malloc(n * sizeof *idx); double *a = malloc(n * sizeof *a);
  for (int i = 0; i < n; i++) { idx[i] = (int)((i * 7919L) % n); a[i] = i * 0.5; }
  double s = 0;
  for (int i = 0; i < n; i++) s += a[idx[i]];
  for (int i = n - 1; i >= 0; i--) s -= 0.25 * a[idx[i]];
  printf("%.3f\\n", s); free(idx); free(a); return 0;
}""",
    # Unsigned countdown, triangular and negative-step loops over a VLA.
    "countdown_triangular": """
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  unsigned n = 300, m = 257;
  double (*A)[m] = malloc(sizeof(double[n][m]));
  for (unsigned i = n; i-- > 0;) for (unsigned j = 0; j < m; j++) A[i][j] = i * 1.0 + j;
  double s = 0;
  for (unsigned i = 0; i < n; i++) for (unsigned j = 0; j <= i && j < m; j++) s += A[i][j];
  for (int j = (int)m - 1; j >= 0; j -= 3) for (int i = (int)n - 1; i > 0; i--) s += A[i][j];
  printf("%.1f\\n", s); free(A); return 0;
}""",
    # Linearized A[i*n + j], break/continue/goto, bound changed in the body, aliasing.
    "linear_control": """
#include <stdio.h>
#include <stdlib.h>
static void axpy(double *x, double *y, int n) { for (int i = 0; i < n; i++) y[i] += 2 * x[i]; }
int main(void) {
  int n = 700; double *A = calloc((size_t)n * n, sizeof *A);
  for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) A[i * n + j] = (i ^ j) & 15;
  double s = 0; int lim = n;
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < lim; i++) {
      if (A[i * n + j] == 3) continue;
      if (A[i * n + j] > 14) break;
      s += A[i * n + j];
      if (s > 1e9) goto out;
    }
    if (j == 100) lim = n / 2;
  }
out:
  axpy(A, A + 1, n * n - 1);
  printf("%.1f %.1f\\n", s, A[n * n - 1]); free(A); return 0;
}""",
    # Struct members, static locals and __LINE__ in loop bodies.
    "struct_static": """
#include <stdio.h>
struct grid { double v[4000]; int w[4000]; } g;
int main(void) {
  struct grid *p = &g; long line = 0;
  for (int i = 0; i < 4000; i++) { static int calls; calls++; g.v[i] = i; p->w[i] = calls;
    line = __LINE__; }
  double s = 0;
  for (int i = 3999; i >= 0; i -= 2) s += g.v[i] * p->w[i];
  printf("%.0f %ld\\n", s, line); return 0;
}""",
}


@pytest.mark.parametrize("name", sorted(TRAPS))
@pytest.mark.parametrize("sanitize", [False, True], ids=["plain", "asan-ubsan"])
def test_hints_never_change_results(tmp_path, name, sanitize):
    (tmp_path / f"{name}.c").write_text(TRAPS[name])
    flags = ["-O1", "-g", "-Wall", "-Wextra", "-Werror"]
    if sanitize:
        flags += ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    cc(*flags, f"{name}.c", "-o", "P", cwd=tmp_path)
    cc(*flags, "--no-prefetch", f"{name}.c", "-o", "O", cwd=tmp_path)
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0"}
    o = subprocess.run(["./O"], cwd=tmp_path, capture_output=True, text=True, env=env)
    p = subprocess.run(["./P"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert o.returncode == 0 and p.returncode == 0, p.stderr
    assert o.stdout == p.stdout and p.stderr == ""
    r = cc("--report", f"{name}.c", "-o", "R", cwd=tmp_path)
    assert "loop nest" in r.stderr


@pytest.mark.parametrize("name", ["column_traversal", "deep_nest", "row_pointers", "steps",
                                  "struct_walks", "versioned_loops"])
def test_equal_granules_draw_no_warnings(tmp_path, name):
    # With a page as large as a block, choices between them have equal branches and some
    # limits fold to 0: the generated text must not draw -Wduplicated-branches or
    # -Wtype-limits (the hints' logic is in foresight.h and the library, not per hint).
    src = Path(__file__).resolve().parents[1] / "corpus" / f"{name}.c"
    p = cc("-O2", "--fs-page", "64", "--fs-block", "64", "-Werror", "-Wduplicated-branches",
           "-Wtype-limits", "-Wall", "-Wextra", "--emit-c", "out", "-c", str(src), "-o", "x.o",
           cwd=tmp_path)
    assert p.stderr == "", p.stderr
    assert "FORESIGHT_SITE(" in (tmp_path / "out" / f"{name}.c").read_text()


@pytest.mark.parametrize("name", ["struct_walks", "versioned_loops"])
def test_transformed_code_compiles_under_strict_warnings(tmp_path, name):
    # The hints and foresight.h must not turn a clean build red: the transformed text is
    # the one compiled (no fallback warning) and it holds hints.
    src = Path(__file__).resolve().parents[1] / "corpus" / f"{name}.c"
    strict = ["-std=c11", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wcast-qual",
              "-Wshadow", "-Wmissing-prototypes", "-Wstrict-prototypes"]
    p = cc("-O2", *strict, "--emit-c", "out", "-c", str(src), "-o", "x.o", cwd=tmp_path)
    assert p.stderr == "", p.stderr
    assert "FORESIGHT_SITE(" in (tmp_path / "out" / f"{name}.c").read_text()


def test_generated_code_grows_linearly_and_boundedly_per_nest(tmp_path):
    # The generated C stays proportionate: per nest of the many-nest generator (strided,
    # transposed, indirect and stencil nests, most of them hinted) it adds a bounded
    # amount (about 3.9 KiB at present; 14 KiB when each stream's check was expanded
    # inline), and a file four times larger generates about four times as much.
    from foresight.bench import gen_nests
    sizes = []
    for lines in (250, 1000):
        text, nests = gen_nests.generate(lines, 1)
        (tmp_path / f"n{lines}.c").write_text(text)
        p = subprocess.run([FORESIGHT, "cc", "--emit-c", "out", "-c", f"n{lines}.c"],
                           cwd=tmp_path, capture_output=True, text=True,
                           env=dict(os.environ, FORESIGHT_CC="true"))
        assert p.returncode == 0, p.stderr
        out = (tmp_path / "out" / f"n{lines}.c").read_text()
        assert out.count("foresight_nest_enter(") > nests // 2
        sizes.append((len(out) - len(text)) / nests)
    assert all(s < 5 * 1024 for s in sizes), sizes
    assert 0.8 < sizes[1] / sizes[0] < 1.25, sizes


def test_one_nest_gets_at_most_64_hints(tmp_path):
    # What one nest adds is bounded: 80 arrays written in one loop and read in another
    # get 64 hints per loop, the other references are reported as left out, and the
    # program prints what cc's build does.
    n = 80
    decls = "".join(f"static double a{k}[1 << 16];\n" for k in range(n))
    body = " + ".join(f"a{k}[i]" for k in range(n))
    init = "".join(f"    a{k}[i] = i % {k + 3};\n" for k in range(n))
    (tmp_path / "many.c").write_text(
        "#include <stdio.h>\n" + decls + "int main(void) {\n  double s = 0;\n"
        "  for (int i = 0; i < (1 << 16); i++) {\n" + init + "  }\n"
        "  for (int i = 0; i < (1 << 16); i++)\n    s += " + body + ";\n"
        '  printf("%.1f\\n", s);\n  return 0;\n}\n')
    p = cc("--report", "--emit-c", "out", "many.c", "-o", "P", cwd=tmp_path)
    assert p.stderr.count("not hinted: the nest already has 64 hints") == 2 * (n - 64)
    assert (tmp_path / "out" / "many.c").read_text().count("FORESIGHT_SITE(") <= 2 * 64
    subprocess.run(["cc", "many.c", "-o", "O"], cwd=tmp_path, check=True)
    o = subprocess.run(["./O"], cwd=tmp_path, capture_output=True, text=True, check=True)
    q = subprocess.run(["./P"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert q.stdout == o.stdout


def test_unhinted_runs_take_a_copy_of_the_nest_unless_it_cannot_be_copied(tmp_path):
    # The first nest runs as the hinted version or a copy of its text, chosen at entry;
    # the second holds a static local, which a copy would make a second object.
    (tmp_path / "k.c").write_text(
        "double A[1 << 20];\nint main(void) {\n  double s = 0;\n"
        "  for (int i = 0; i < 1 << 20; i++) s += A[i];\n"
        "  for (int i = 0; i < 1 << 20; i++) { static int k; k++; s += A[i] * k; }\n"
        "  return (int)s;\n}\n")
    p = cc("--report", "--report-json", "r.json", "--emit-c", "out", "-c", "k.c",
           cwd=tmp_path)
    first, second = json.loads((tmp_path / "r.json").read_text())
    assert first["hints"] and first["no_unhinted_copy"] is None
    assert second["hints"] and "static local (k, line 5)" in second["no_unhinted_copy"]
    assert "unhinted runs run the hinted code with its hints off: a static local" in p.stderr
    text = (tmp_path / "out" / "k.c").read_text()
    assert text.count("s += A[i];") == 2 and text.count("s += A[i] * k;") == 1
    assert text.count("static int k;") == 1
