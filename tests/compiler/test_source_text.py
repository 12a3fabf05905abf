"""The transformed text is the user's text: __FILE__, __LINE__, assert messages and
identifiers come out as plain cc makes them, whatever the file is called and however the
source spells things (UTF-8 names, paths given as ./x.c, quotes in file names)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")

PROGRAM = """\
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  long ñ = 200000 + argc;
  double *données = malloc((size_t)ñ * sizeof *données);
  for (long δ = 0; δ < ñ; δ++) données[δ] = (double)(δ % 7);
  double π = 0;
  for (long δ = ñ - 1; δ >= 0; δ--)
    π += données[δ];
  printf("%s:%d %.1f\\n", __FILE__, __LINE__, π);
  assert(argc > 1 && "needs an argument");
  (void)argv;
  return 0;
}
"""


def build_and_run(cwd: Path, name: str, *pre: str) -> tuple[subprocess.CompletedProcess, list]:
    out = []
    for tag, cmd in (("O", ["cc"]), ("P", [FORESIGHT, "cc", "--report-json", "r.json"])):
        b = subprocess.run([*cmd, *pre, "-O1", name, "-o", tag], cwd=cwd,
                           capture_output=True)
        assert b.returncode == 0, b.stderr.decode(errors="replace")
        assert b"did not compile" not in b.stderr, b.stderr.decode(errors="replace")
        # the same argv[0] for both: assert messages name the program
        out.append(subprocess.run(["./prog"], executable=cwd / tag, cwd=cwd,
                                  capture_output=True))
    report = json.loads((cwd / "r.json").read_text())
    return out, report


@pytest.mark.parametrize("name", ["./x.c", "données δ.c", 'q"uote.c', "./sub/../b\\s.c",
                                  "./-dash.c"])
def test_file_line_and_assert_are_the_originals(tmp_path, name):
    (tmp_path / "sub").mkdir()
    src = tmp_path / name
    src.write_bytes(PROGRAM.encode())
    (o, p), report = build_and_run(tmp_path, name)
    assert [e for e in report if e.get("hints")], "nothing was hinted: the test proves nothing"
    assert p.returncode == o.returncode != 0       # the assert fires in both
    assert p.stdout == o.stdout and p.stderr == o.stderr
    assert name.encode() in o.stdout and b":12 " in o.stdout


def test_non_utf8_bytes_pass_through(tmp_path):
    # A Latin-1 comment and string: not UTF-8, kept byte for byte.
    src = PROGRAM.replace("int main", 'static const char *w = "na@ve"; /* caf@ */\nint main')
    src = src.replace("  (void)argv;", "  (void)argv; puts(w);")
    (tmp_path / "l1.c").write_bytes(src.encode().replace(b"@", b"\xef"))
    (o, p), report = build_and_run(tmp_path, "l1.c")
    assert [e for e in report if e.get("hints")]
    assert p.stdout == o.stdout and p.stderr == o.stderr


def test_byte_order_mark_and_crlf(tmp_path):
    # cc skips a UTF-8 byte order mark only as a file's first bytes: it stays first.
    src = "\ufeff" + PROGRAM.replace("\n", "\r\n")
    (tmp_path / "bom.c").write_bytes(src.encode())
    (o, p), report = build_and_run(tmp_path, "bom.c")
    assert [e for e in report if e.get("hints")], "nothing was hinted: the test proves nothing"
    assert p.returncode == o.returncode != 0
    assert p.stdout == o.stdout and p.stderr == o.stderr


def test_hints_draw_no_long_long_warning(tmp_path):
    # -Wlong-long under -pedantic: the hints' constants carry no LL suffix.
    (tmp_path / "ll.c").write_bytes(PROGRAM.encode())
    flags = ["-std=c99", "-pedantic", "-Wlong-long", "-Werror", "-O1", "-c", "ll.c"]
    p = subprocess.run([FORESIGHT, "cc", "--report-json", "r.json", *flags, "-o", "p.o"],
                       cwd=tmp_path, capture_output=True)
    assert p.returncode == 0 and p.stderr == b"", p.stderr.decode(errors="replace")
    assert [e for e in json.loads((tmp_path / "r.json").read_text()) if e.get("hints")]


def test_standard_input_is_compiled_unchanged_and_says_so(tmp_path):
    p = subprocess.run([FORESIGHT, "cc", "--report", "-O1", "-x", "c", "-", "-o", "S"],
                       cwd=tmp_path, input=PROGRAM.encode(), capture_output=True)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert b"no hints for standard input" in p.stderr
    assert b"no loop nests found" not in p.stderr
    r = subprocess.run(["./S", "x"], cwd=tmp_path, capture_output=True)
    assert r.returncode == 0 and r.stdout.startswith(b"<stdin>:12 ")


def test_diagnostics_are_the_originals(tmp_path):
    """Warnings name the user's lines and columns as cc does, and none is about the
    hints (-Wdeclaration-after-statement, -Wshadow, -Wconversion on inserted code)."""
    src = PROGRAM.replace("  double π = 0;", "  double π = 0; int unused = 3;")
    (tmp_path / "w.c").write_bytes(src.encode())
    flags = ["-std=gnu11", "-Wall", "-Wextra", "-Wshadow", "-Wconversion",
             "-Wdeclaration-after-statement", "-Wcast-qual", "-O2", "-c", "w.c"]
    o = subprocess.run(["cc", *flags, "-o", "o.o"], cwd=tmp_path, capture_output=True)
    p = subprocess.run([FORESIGHT, "cc", "--report-json", "r.json", *flags, "-o", "p.o"],
                       cwd=tmp_path, capture_output=True)
    assert o.returncode == p.returncode == 0
    assert b"unused" in o.stderr
    assert p.stderr == o.stderr
    assert [e for e in json.loads((tmp_path / "r.json").read_text()) if e.get("hints")]


def _hinted(tmp_path, name: str, source: str | bytes) -> tuple:
    """SOURCE built by foresight cc -O2 --report as NAME, then run: (its report on
    stderr, the program's stdout); bytes in, bytes out."""
    src = tmp_path / f"{name}.c"
    raw = isinstance(source, bytes)
    src.write_bytes(source) if raw else src.write_text(source)
    r = subprocess.run([FORESIGHT, "cc", "-O2", "--report", "-o", str(tmp_path / name),
                        str(src)], capture_output=True, text=not raw, check=True)
    out = subprocess.run([str(tmp_path / name)], capture_output=True, text=not raw).stdout
    return r.stderr, out


def test_line_at_counts_lines_before_the_offset():
    from foresight.compiler.options import line_at

    data = b"a\nbc\n\nd"
    # offsets: a=0 \n=1 b=2 c=3 \n=4 \n=5 d=6
    assert [line_at(data, o) for o in range(len(data) + 1)] == [1, 1, 2, 2, 2, 3, 4, 4]
    assert line_at(b"", 0) == 1
    assert line_at(data, 3) == data.count(b"\n", 0, 3) + 1


def test_base_file_names_the_users_file(tmp_path):
    """__BASE_FILE__ is the file cc was given, not foresight's transformed copy."""
    src = tmp_path / 'we"ird' / "b.c"
    src.parent.mkdir()
    src.write_text('#include <stdio.h>\n#include <stdlib.h>\n'
                   'int main(void) {\n  long n = 100000; double *a = calloc(n, 8), s = 0;\n'
                   '  for (long i = 0; i < n; i++) s += a[i];\n'
                   '  printf("%s %s %.0f\\n", __BASE_FILE__, __FILE__, s);\n  return 0;\n}\n')
    outs = []
    for cc in (["cc"], [FORESIGHT, "cc"]):
        exe = tmp_path / "x"
        subprocess.run([*cc, "-O2", "-Wall", "-Werror", "-o", str(exe), 'we"ird/b.c'],
                       cwd=tmp_path, check=True)
        outs.append(subprocess.run([str(exe)], capture_output=True, text=True).stdout)
    assert outs[0] == outs[1] == 'we"ird/b.c we"ird/b.c 0\n'


def test_a_nest_written_with_digraphs_is_left_alone_and_the_file_still_compiles(tmp_path):
    """`<% x<:i:> = i; %>`: the edits find braces as one character, so such a nest is
    left unchanged (said in the report), and the rest of the file keeps its hints."""
    err, out = _hinted(tmp_path, "d", "#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n"
                       "  long n = 1L << 20; double *x = malloc(n * sizeof *x), s = 0;\n"
                       "  for (long i = 0; i < n; i++) <% x<:i:> = i; %>\n"
                       "  for (long i = 0; i < n; i++) s += x[i];\n"
                       '  printf("%.0f\\n", s);\n  return 0;\n}\n')
    assert "did not compile" not in err
    assert "written with digraphs" in err and "1 hinted" in err
    assert out == "549755289600\n"


def test_a_latin1_file_gets_hints_and_its_bytes_back(tmp_path):
    """Older codes carry Latin-1 text (`"Température (°C)"`): not UTF-8, yet analysed,
    and its bytes reach cc unchanged."""
    err, out = _hinted(tmp_path, "l", b'#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n'
                       b'  long n = 1L << 18; double *t = realloc(0, n * sizeof *t), s = 0;\n'
                       b'  printf("Temp\xe9rature (\xb0C)\\n");\n'
                       b'  for (long i = 0; i < n; i++) t[i] = i % 40;\n'
                       b'  for (long i = 0; i < n; i++) s += t[i];\n'
                       b'  printf("%.0f\\n", s);\n  return 0;\n}\n')
    assert b"transformation failed" not in err and b"2 hinted" in err
    assert out == b"Temp\xe9rature (\xb0C)\n5111616\n"


def test_a_sum_of_hundreds_of_terms_does_not_cost_the_file_its_hints(tmp_path):
    """Generated code (SymPy, Maple, unrolled stencils) sums hundreds of terms in one
    expression: deeper than Python's default recursion, once the end of the whole file's
    transformation."""
    terms = " + ".join(f"c[{k}] * a[i]" for k in range(400))
    src = tmp_path / "g.c"
    src.write_text("#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n"
                   "  long n = 1L << 18; double c[400], *a = realloc(0, n * sizeof *a), s = 0;\n"
                   "  for (int k = 0; k < 400; k++) c[k] = k % 3;\n"
                   "  for (long i = 0; i < n; i++) a[i] = i % 5;\n"
                   f"  for (long i = 0; i < n; i++) s += {terms};\n"
                   '  printf("%.0f\\n", s);\n  return 0;\n}\n')
    r = subprocess.run([FORESIGHT, "cc", "-O2", "--report", "-o", str(tmp_path / "g"),
                        str(src)], capture_output=True, text=True, check=True)
    assert "transformation failed" not in r.stderr and "2 hinted" in r.stderr, r.stderr


def test_a_floating_point_bound_adds_no_undefined_conversion(tmp_path):
    """`for (int i = n - 1; i > lo; i--)` with `double lo = -2.5`: the hints must not
    convert lo to an unsigned integer (undefined for a negative value)."""
    src = tmp_path / "f.c"
    src.write_text("#include <stdio.h>\n#include <stdlib.h>\n"
                   "int main(int argc, char **argv) {\n"
                   "  int n = 100000; double *a = malloc(n * sizeof *a), s = 0;\n"
                   "  for (int i = 0; i < n; i++) a[i] = i % 10;\n"
                   "  double lo = argc > 1 ? atof(argv[1]) : -2.5;\n"
                   "  for (int i = n - 1; i > lo; i--) s += a[i];\n"
                   '  printf("%.0f\\n", s);\n  return 0;\n}\n')
    exe = tmp_path / "f"
    subprocess.run([FORESIGHT, "cc", "-O1", "-fsanitize=float-cast-overflow",
                    "-fno-sanitize-recover=all", "-o", str(exe), str(src)], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True,
                       env={**os.environ, "FORESIGHT_INCORE": "hint"})
    assert (r.returncode, r.stdout, r.stderr) == (0, "450000\n", "")


def test_ifdef_gnuc_and_defined_clang_read_as_cc_reads_them(tmp_path):
    """`#ifdef __GNUC__` and `defined(__clang__)` in the file: analysed (not refused as
    unparsable) with cc's answers, so the nest's trip count is cc's."""
    err, out = _hinted(tmp_path, "g", "#include <stdio.h>\n#include <stdlib.h>\n#ifdef __GNUC__\n"
                       "#define N 3000\n#else\n#define N 5\n#endif\n#if defined(__clang__)\n"
                       "#error clang\n#endif\nint main(void) {\n"
                       "  double *a = calloc(N * 100, 8), s = 0;\n"
                       "  for (long i = 0; i < N * 100; i++) s += a[i];\n"
                       '  printf("%d %.0f\\n", N, s);\n  return 0;\n}\n')
    assert "warning" not in err and "trip 300000" in err and "1 hinted" in err
    assert out == "3000 0\n"


def test_a_file_using_stdatomic_h_is_analysed(tmp_path):
    """<stdatomic.h>: clang's own header hands over to gcc's, which libclang cannot
    parse; read through the front end's shim, the file keeps its hints."""
    err, out = _hinted(tmp_path, "a", "#include <stdatomic.h>\n#include <stdio.h>\n"
                       "#include <stdlib.h>\nstatic atomic_long done;\nint main(void) {\n"
                       "  long n = 1L << 18; double *a = calloc(n, 8), s = 0;\n"
                       "  for (long i = 0; i < n; i++) s += a[i];\n"
                       "  atomic_fetch_add(&done, 1);\n"
                       '  printf("%.0f %ld\\n", s, (long)atomic_load(&done));\n  return 0;\n}\n')
    assert "warning" not in err and "1 hinted" in err, err
    assert out == "0 1\n"
