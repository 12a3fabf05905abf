"""The `foresight cc` driver as a drop-in cc: arguments, outputs, dependency files, errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

BIN = Path(sys.prefix) / "bin"
FORESIGHT = str(BIN / "foresight")

# A column traversal of a row-major matrix: the compiler inserts hints here, so the
# driver compiles a transformed temporary copy (the interesting path).
KERNEL = """\
#include "grid.h"
double A[ROWS][COLS];
double colsum(void) {
  double s = 0;
  for (int j = 0; j < COLS; j++)
    for (int i = 0; i < ROWS; i++)
      s += A[i][j];
  return s;
}
void fill(void) {
  for (int i = 0; i < ROWS; i++)
    for (int j = 0; j < COLS; j++)
      A[i][j] = (i + j) % 5;
}
"""
HEADER = "#define ROWS 4096\n#define COLS 512\ndouble colsum(void);\nvoid fill(void);\n"
MAIN = """\
#include <stdio.h>
#include "grid.h"
int main(void) {
  fill();
  printf("%.0f\\n", colsum());
  return 0;
}
"""
EXPECTED = f"{sum((i + j) % 5 for i in range(4096) for j in range(512))}\n"


def fcc(*args: str, cwd: Path, check: bool = True, env: dict | None = None,
        exe: list[str] | None = None) -> subprocess.CompletedProcess:
    cmd = [*(exe or [FORESIGHT, "cc"]), *args]
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                       env=None if env is None else {**os.environ, **env})
    if check:
        assert p.returncode == 0, p.stderr
    return p


def run(prog: str, cwd: Path) -> str:
    return subprocess.run([prog], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def project(tmp_path, cc):
    (tmp_path / "grid.h").write_text(HEADER)
    (tmp_path / "kernel.c").write_text(KERNEL)
    (tmp_path / "main.c").write_text(MAIN)
    return tmp_path


def test_make_builds_and_runs_a_multi_file_project(project):
    (project / "Makefile").write_text(
        "CFLAGS = -O2 -Wall -Wextra -Werror\n"
        "prog: main.o kernel.o\n\t$(CC) $(CFLAGS) -o $@ main.o kernel.o\n"
        "%.o: %.c grid.h\n\t$(CC) $(CFLAGS) -MMD -MP -c $< -o $@\n")
    p = subprocess.run(["make", f"CC={FORESIGHT} cc"], cwd=project, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert run("./prog", project) == EXPECTED
    # -MMD from a transformed file: the original source and header, never the temp copy.
    dep = (project / "kernel.d").read_text()
    assert dep.startswith("kernel.o: kernel.c") and "grid.h" in dep
    assert "foresight-cc-" not in dep
    # Objects from foresight cc link with plain cc (no runtime): hints become no-ops.
    subprocess.run(["cc", "-o", "plain", "main.o", "kernel.o"], cwd=project, check=True)
    assert run("./plain", project) == EXPECTED
    # Nothing to do the second time: make sees up-to-date targets.
    again = subprocess.run(["make", "-q", f"CC={FORESIGHT} cc"], cwd=project)
    assert again.returncode == 0


def test_cmake_project_with_foresight_cc(project):
    if shutil.which("cmake") is None:
        pytest.skip("no cmake")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(t C)\n"
        "add_executable(prog main.c kernel.c)\n")
    env = {**os.environ, "CC": str(BIN / "foresight-cc")}
    for cmd in (["cmake", "-S", ".", "-B", "build"], ["cmake", "--build", "build"]):
        p = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr
    assert run("./build/prog", project) == EXPECTED


def test_output_names_as_cc(project):
    fcc("-c", "kernel.c", "main.c", cwd=project)
    assert (project / "kernel.o").is_file() and (project / "main.o").is_file()
    (project / "out").mkdir()
    fcc("-c", "kernel.c", "-o", "out/k.o", cwd=project)
    assert (project / "out" / "k.o").is_file()
    fcc("-O1", "kernel.c", "main.c", cwd=project)  # link, default a.out
    assert run("./a.out", project) == EXPECTED
    fcc("-S", "kernel.c", cwd=project)
    assert "colsum" in (project / "kernel.s").read_text()
    assert not list(project.glob("*.c.*"))


def test_sources_in_other_directories_keep_their_quote_includes(tmp_path, cc):
    for d, value in (("a", 1), ("b", 2)):
        (tmp_path / d).mkdir()
        (tmp_path / d / "grid.h").write_text(HEADER + f"#define WHICH {value}\n")
    (tmp_path / "a" / "kernel.c").write_text(KERNEL + "int which_a(void) { return WHICH; }\n")
    (tmp_path / "b" / "main.c").write_text(
        MAIN.replace("int main", "int which_a(void);\nint main").replace(
            "  return 0;", '  printf("%d %d\\n", which_a(), WHICH);\n  return 0;'))
    fcc("-o", "prog", "a/kernel.c", "b/main.c", cwd=tmp_path)
    assert run("./prog", tmp_path) == EXPECTED + "1 2\n"


def test_a_compiler_wrappers_own_include_directories_are_searched(project):
    """FORESIGHT_CC a wrapper that adds its own -I, as MPI's mpicc does for <mpi.h>: the
    analysis finds the header where cc does, and the nests are hinted, not left alone as
    a file libclang cannot parse."""
    inc = project / "wrapped"
    inc.mkdir()
    # Read as cc reads it (gcc 12, not the __GNUC__ 4 libclang says it is), also there.
    (inc / "grid.h").write_text("#if __GNUC__ < 5\n#error needs gcc 5\n#endif\n" + HEADER)
    (project / "grid.h").unlink()
    wrapper = project / "wrapcc"
    wrapper.write_text(f'#!/bin/sh\nexec cc -I{inc} "$@"\n')
    wrapper.chmod(0o755)
    kernel = KERNEL.replace('#include "grid.h"', "#include <grid.h>")
    (project / "kernel.c").write_text(kernel)
    p = fcc("--report", "-c", "kernel.c", cwd=project, env={"FORESIGHT_CC": str(wrapper)})
    assert "cannot parse" not in p.stderr
    assert "2 loop nests, 2 hinted" in p.stderr, p.stderr
    p = fcc("--report", "-c", "kernel.c", cwd=project, check=False)
    assert p.returncode != 0   # cc alone does not find it either


def _rule(path: Path) -> str:
    """A dependency file's text with its line continuations joined (where cc breaks the
    lines depends on the length of the temporary copy's path)."""
    return re.sub(r"[ \t]*\\\n[ \t]*", " ", path.read_text())


def test_dependency_files_name_the_original_source(project):
    fcc("-MD", "-c", "kernel.c", cwd=project)
    dep = _rule(project / "kernel.d")
    assert dep.startswith("kernel.o: kernel.c") and "grid.h" in dep
    assert "foresight-cc-" not in dep
    (project / "obj").mkdir()
    fcc("-MD", "-c", "kernel.c", "-o", "obj/kernel.o", cwd=project)
    assert _rule(project / "obj" / "kernel.d").startswith("obj/kernel.o: kernel.c")
    fcc("-MMD", "-MF", "k.dep", "-MT", "custom", "-c", "kernel.c", cwd=project)
    dep = _rule(project / "k.dep")
    assert dep.startswith("custom: kernel.c") and "foresight-cc-" not in dep
    fcc("-Wp,-MD,.kernel.o.d", "-c", "kernel.c", cwd=project)  # Linux kernel style
    dep = (project / ".kernel.o.d").read_text()
    assert "kernel.c" in dep and "foresight-cc-" not in dep
    fcc("-MD", "kernel.c", "main.c", "-o", "prog", cwd=project)
    assert "foresight-cc-" not in (project / "prog.d").read_text()
    assert run("./prog", project) == EXPECTED


@pytest.mark.parametrize("folder", ["s p", "d#x", "d$x", "b\\ s"])
def test_dependency_files_quote_paths_as_cc_does(project, cc, folder):
    # make reads `#` as a comment, `$` as a variable and a space as a separator: the
    # target and the source are quoted as cc quotes them, byte for byte.
    d = project / folder
    d.mkdir()
    (d / "k.c").write_text((project / "kernel.c").read_text())
    (d / "grid.h").write_text((project / "grid.h").read_text())
    fcc("-MMD", "-c", f"{folder}/k.c", "-o", f"{folder}/k.o", cwd=project)
    subprocess.run([cc, "-MMD", "-c", f"{folder}/k.c", "-o", f"{folder}/g.o", "-MF",
                    f"{folder}/g.d"], cwd=project, check=True)
    ours, theirs = (d / "k.d").read_text(), (d / "g.d").read_text()
    assert ours == theirs.replace("g.o", "k.o", 1), (ours, theirs)


def test_long_output_spelling_and_long_file_names(project):
    fcc("-c", "kernel.c", "--output=a.o", cwd=project)
    fcc("-c", "kernel.c", "--output", "b.o", cwd=project)
    assert (project / "a.o").is_file() and (project / "b.o").is_file()
    assert not (project / "kernel.o").exists()
    # A name of NAME_MAX less its suffix: no temporary name of ours may be longer.
    long = "k" * 250
    (project / f"{long}.c").write_text((project / "kernel.c").read_text())
    fcc("-MMD", "-c", f"{long}.c", cwd=project)
    dep = " ".join((project / f"{long}.d").read_text().replace("\\\n", " ").split())
    assert dep == f"{long}.o: {long}.c grid.h", dep
    fcc(f"{long}.o", "main.c", "-o", "prog1", cwd=project)
    fcc(f"{long}.c", "main.c", "-o", "prog2", cwd=project)
    assert run("./prog1", project) == run("./prog2", project) == EXPECTED


def test_report_names_loops_left_in_headers(tmp_path):
    (tmp_path / "dot.h").write_text("static inline double dot(const double *a, int n)\n"
                                    "{ double s = 0; for (int i = 0; i < n; i++) s += a[i];"
                                    " return s; }\n")
    (tmp_path / "use.c").write_text('#include <stdio.h>\n#include "dot.h"\n'
                                    "double v[4];\nint main(void) "
                                    '{ printf("%g\\n", dot(v, 4)); return 0; }\n')
    p = fcc("--report", "-c", "use.c", cwd=tmp_path)
    assert "dot.h:1: [frontend] dot() has loops but is defined in a header" in p.stderr
    assert "no loop nests found" not in p.stderr and "printf" not in p.stderr


def test_a_file_name_that_is_not_utf8_compiles_unchanged_with_one_clear_warning(project):
    name = os.fsdecode(b"caf\xe9.c")
    (project / name).write_text((project / "kernel.c").read_text())
    p = fcc("-c", name, "-o", "k.o", cwd=project)
    assert p.stderr.count("\n") == 1 and "Error" not in p.stderr, p.stderr
    assert "caf\\xe9.c: warning: foresight cc: the file's path is not UTF-8" in p.stderr
    fcc("k.o", "main.c", "-o", "prog", cwd=project)
    assert run("./prog", project) == EXPECTED


ROWS = """#include <stdio.h>
#include <stdlib.h>
int main(void) {
  size_t nr = 1000, nc = 1000, i, j;
  double s = 0, **rows = malloc(nr * sizeof *rows);
  for (i = 0; i < nr; i++) rows[i] = calloc(nc, sizeof **rows);
  for (i = 0; i < nr; i++) rows[i][i] = (double)i;
  for (i = 0; i < nr; i++)
    for (j = 0; j < nc; j++) s += rows[i][j];
  printf("%g\\n", s);
  return 0;
}
"""


@pytest.mark.parametrize("flags", [["-Werror", "-Wdeclaration-after-statement"],
                                   ["-std=c99", "-pedantic-errors", "-Wc90-c99-compat"],
                                   ["-Werror=traditional-conversion"]])
def test_warnings_made_errors_about_the_hints_keep_the_hints(tmp_path, cc, flags):
    # The user's code is clean under FLAGS; what gcc says of the inserted code must
    # neither fail the build nor cost the hints (and the user's own code is still judged).
    (tmp_path / "rows.c").write_text(ROWS)
    subprocess.run([cc, "-O2", *flags, "-c", "rows.c", "-o", "g.o"], cwd=tmp_path,
                   check=True)
    p = fcc("-O2", *flags, "-c", "rows.c", "-o", "rows.o", cwd=tmp_path)
    assert p.stderr == "", p.stderr
    syms = subprocess.run(["nm", "rows.o"], cwd=tmp_path, capture_output=True, text=True)
    assert "foresight" in syms.stdout   # the hinted object, not the original's
    fcc("rows.o", "-o", "rows", cwd=tmp_path)
    assert subprocess.run(["./rows"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "FORESIGHT_INCORE": "hint"}).stdout == "499500\n"
    mixed = "int main(void) {\n  puts(\"x\"); int k = 1; (void)k;"
    (tmp_path / "bad.c").write_text(ROWS.replace("int main(void) {", mixed))
    if subprocess.run([cc, "-O2", *flags, "-c", "bad.c", "-o", "b.o"], cwd=tmp_path,
                      capture_output=True).returncode != 0:
        assert fcc("-O2", *flags, "-c", "bad.c", "-o", "bad.o", cwd=tmp_path,
                   check=False).returncode != 0   # the user's own code fails as with cc


def test_the_warning_free_retry_leaves_the_originals_dependency_file(tmp_path, cc):
    # Linux-kernel style: -Wp,-MD names the dependency file; the next make must read it.
    (tmp_path / "rows.c").write_text(ROWS)
    flags = ["-O2", "-Werror", "-Wdeclaration-after-statement"]
    p = fcc(*flags, "-Wp,-MD,.rows.o.d", "-c", "rows.c", "-o", "rows.o", cwd=tmp_path)
    assert p.stderr == "", p.stderr
    dep = (tmp_path / ".rows.o.d").read_text()
    assert dep.startswith("rows.o: rows.c") and "foresight" not in dep, dep
    assert sorted(f.name for f in tmp_path.iterdir()) == [".rows.o.d", "rows.c", "rows.o"]
    # -S -o -: one assembly text on stdout, though the first text was rejected
    asm = fcc(*flags, "-S", "rows.c", "-o", "-", cwd=tmp_path).stdout
    assert asm.count("\nmain:") == 1


def test_static_spelled_long_and_arguments_that_are_not_utf8(tmp_path, cc):
    (tmp_path / "rows.c").write_text(ROWS)
    if subprocess.run([cc, "--static", "rows.c", "-o", "g"], cwd=tmp_path,
                      capture_output=True).returncode == 0:
        p = fcc("-O2", "--static", "rows.c", "-o", "s", cwd=tmp_path)
        assert "-static: the runtime is a shared library" in p.stderr
    inc = os.fsdecode(b"inc\xe9")
    (tmp_path / inc).mkdir()
    p = fcc("-O2", "-c", "rows.c", "-o", "r.o", f"-I{inc}", cwd=tmp_path)
    assert "an argument (-Iinc\\xe9) is not UTF-8" in p.stderr and "Error" not in p.stderr


def test_report_of_a_file_compiled_unchanged_says_so(tmp_path):
    # A stack limit the hint state exceeds: the transformed text is refused, the file is
    # compiled as written, and the report must not count its nests as hinted.
    (tmp_path / "rows.c").write_text(ROWS)
    p = fcc("-O2", "-Werror", "-Wstack-usage=64", "--report", "--report-json", "r.json",
            "-c", "rows.c", "-o", "rows.o", cwd=tmp_path)
    assert "the transformed code did not compile" in p.stderr
    assert "rows.c: summary: 3 loop nests, none hinted: the transformed text did not " \
           "compile, so the file was compiled unchanged" in p.stderr, p.stderr
    entries = json.loads((tmp_path / "r.json").read_text())
    assert entries and all(e.get("compiled_unchanged") for e in entries)


SELF_INCLUDING = """\
#ifndef T
#include <stdio.h>
#include <stdlib.h>
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define T float
#include __FILE__
#undef T
#define T double
#include __FILE__
#undef T
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    float *f = malloc(n * sizeof *f);
    double *d = malloc(n * sizeof *d);
    for (long i = 0; i < n; i++) { f[i] = 1.0f; d[i] = 2.0; }
    printf("%.17g %.17g\\n", sum_float(f, n), sum_double(d, n));
    return 0;
}
#else
static double CAT(sum, T)(const T *a, long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += a[i];
    return s;
}
#endif
"""


def test_a_file_that_includes_itself_is_compiled_unchanged(tmp_path):
    # The template idiom: one loop's text compiled once per element type.  Its hints
    # were spliced once per instance at the same offsets, nested, and the program read
    # past its array (a helper's probe: SIGSEGV with hints on).
    (tmp_path / "t.c").write_text(SELF_INCLUDING)
    for flags in ([], ["--prefetch-thread"]):
        p = fcc("-O2", *flags, "t.c", "-o", "t", cwd=tmp_path)
        assert "t.c:7: the file includes itself, so its text is compiled more than once; " \
               "compiled unchanged" in p.stderr, p.stderr
        out = subprocess.run(["./t"], cwd=tmp_path, capture_output=True, text=True,
                             env={**os.environ, "FORESIGHT_INCORE": "hint"})
        assert out.returncode == 0 and out.stdout == "100000 200000\n", out


def test_a_source_from_a_pipe_reaches_cc(tmp_path):
    # `-x c <(gen)`: the shell passes /dev/fd/N, which cc must inherit (the driver's
    # compiler runs closed every descriptor but the standard ones: "cc1: fatal error:
    # /dev/fd/63: No such file or directory").  A pipe is read once: by cc, unhinted.
    (tmp_path / "rows.c").write_text(ROWS)
    r, w = os.pipe()
    with open(tmp_path / "rows.c", "rb") as f:
        os.write(w, f.read())
    os.close(w)
    try:
        p = subprocess.run([FORESIGHT, "cc", "-O2", "--report", "-x", "c", f"/dev/fd/{r}",
                            "-o", "p"], cwd=tmp_path, capture_output=True, text=True,
                           pass_fds=(r,))
    finally:
        os.close(r)
    assert p.returncode == 0, p.stderr
    assert f"/dev/fd/{r}: not a regular file: no hints; compiled unchanged" in p.stderr
    assert (tmp_path / "p").exists()


def test_a_one_step_build_names_gccs_side_files_as_cc_does(tmp_path):
    # Each C input is compiled to a temporary object before the link: --coverage's .gcno
    # (and the .gcda path compiled into the program), -fstack-usage's .su were named
    # after it and lost with the directory ("0.gcda" written into a re-created
    # /tmp/foresight-cc-XXXX at run time: a helper's probe).
    if not subprocess.run(["cc", "-dumpdir", "x-", "-E", "-x", "c", "/dev/null", "-o",
                           os.devnull], capture_output=True).returncode == 0:
        pytest.skip("cc takes no -dumpdir (GCC 11 or later does)")
    (tmp_path / "rows.c").write_text(ROWS)
    fcc("--coverage", "-fstack-usage", "-O2", "-o", "bin-p", "rows.c", cwd=tmp_path)
    assert (tmp_path / "bin-p-rows.gcno").exists() and (tmp_path / "bin-p-rows.su").exists()
    subprocess.run(["./bin-p"], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "bin-p-rows.gcda").exists()
    assert not list(tmp_path.glob("0.*")), sorted(p.name for p in tmp_path.iterdir())
    # -save-temps keeps the preprocessed text, the assembly and the object, as cc does.
    (tmp_path / "sub").mkdir()
    fcc("-save-temps", "-O2", "-o", "sub/prog", "rows.c", cwd=tmp_path)
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == \
        ["prog", "prog-rows.i", "prog-rows.o", "prog-rows.s"]
    nm = subprocess.run(["nm", str(tmp_path / "sub" / "prog-rows.o")], capture_output=True,
                        text=True, check=True).stdout
    assert " T main" in nm and "foresight_" in nm    # the hinted object
    # -save-temps=cwd: in the current directory, named after the program
    fcc("-save-temps=cwd", "-O2", "-o", "sub/prog2", "rows.c", cwd=tmp_path)
    assert all((tmp_path / f"prog2-rows.{x}").exists() for x in "ios")
    # -o - (a file named "-", as cc writes it) names the rest a-*; --save-temps too
    fcc("--save-temps", "-O2", "-o", "-", "rows.c", cwd=tmp_path)
    assert all((tmp_path / f"a-rows.{x}").exists() for x in "ios")


UNINITIALISED = """\
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static double total(const double *a, long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += a[i];
    return s;
}
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    double *a = malloc(n * sizeof *a);
    printf("%g\\n", total(a, n));
    return 0;
}
"""


def test_a_warning_gcc_finds_late_still_fails_a_werror_build(tmp_path, cc):
    # gcc's -Wmaybe-uninitialized comes from its optimisers, which the hint code feeds
    # other code: the transformed text compiled silently and a -Wall -Werror build cc
    # refuses went through (a helper's probe).  Under -Werror the original's verdict holds.
    (tmp_path / "u.c").write_text(UNINITIALISED)
    want = subprocess.run([cc, "-O2", "-Wall", "-Werror", "-c", "u.c", "-o", "c.o"],
                          cwd=tmp_path, capture_output=True, text=True)
    p = fcc("-O2", "-Wall", "-Werror", "-c", "u.c", "-o", "f.o", cwd=tmp_path, check=False)
    assert p.returncode == want.returncode
    if want.returncode != 0:   # (a compiler that does not warn here: both succeed)
        assert "maybe-uninitialized" in p.stderr and not (tmp_path / "f.o").exists()
    # a compiler wrapper's -Werror counts too
    p = fcc("-O2", "-Wall", "-c", "u.c", "-o", "g.o", cwd=tmp_path, check=False,
            env={"FORESIGHT_CC": f"{cc} -Werror"})
    assert p.returncode == want.returncode
    # without -Werror the hints are kept
    p = fcc("-O2", "-Wall", "--report", "-c", "u.c", "-o", "f.o", cwd=tmp_path)
    assert "hinted" in p.stderr
    from foresight.driver.main import _warnings_are_errors
    assert _warnings_are_errors(["-Werror"]) and _warnings_are_errors(
        ["-Werror=maybe-uninitialized"])
    assert not _warnings_are_errors(["-Werror=format-security"])
    assert not _warnings_are_errors(["-Werror", "-Wno-error"])


def test_the_originals_verdict_writes_none_of_the_users_files(tmp_path):
    # The extra compile of the original under -Werror wrote GCC's side files beside the
    # source (its .gcno replaced the hinted object's: gcov's stamp mismatch) and
    # rewrote a -Wp,-MD dependency file.
    (tmp_path / "rows.c").write_text(ROWS)
    (tmp_path / "b").mkdir()
    fcc("-O2", "-Werror", "--coverage", "-fstack-usage", "-Wp,-MD,b/dep.d", "-c", "rows.c",
        "-o", "b/rows.o", cwd=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "rows.c"]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == \
        ["dep.d", "rows.gcno", "rows.o", "rows.su"]
    assert "rows.c" in (tmp_path / "b" / "dep.d").read_text()


def test_a_static_program_links_without_the_runtime(project, cc):
    probe = subprocess.run([cc, "-static", "kernel.c", "main.c", "-o", "gprog"], cwd=project,
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no static C library here")
    p = fcc("-O2", "-static", "kernel.c", "main.c", "-o", "sprog", cwd=project)
    assert "-static: the runtime is a shared library" in p.stderr
    assert run("./sprog", project) == EXPECTED
    for env in ({}, {"FORESIGHT_INCORE": "hint"}):   # nothing to set it apart from cc's
        assert subprocess.run(["./sprog"], cwd=project, capture_output=True, text=True,
                              env={**os.environ, **env}).stdout == EXPECTED


def test_files_of_one_name_keep_their_reports_and_texts_apart(project):
    (project / "rj").mkdir()
    for d in ("a", "b"):
        (project / d).mkdir()
        (project / d / "kernel.c").write_text((project / "kernel.c").read_text())
        (project / d / "grid.h").write_text((project / "grid.h").read_text())
        fcc("-c", f"{d}/kernel.c", "-o", f"{d}/kernel.o", "--report-json", "rj/",
            "--emit-c", "ec", cwd=project)
    for d in ("a", "b"):
        entries = json.loads((project / "rj" / d / "kernel.c.json").read_text())
        assert {e["source"] for e in entries} == {f"{d}/kernel.c"}
        assert "FORESIGHT_SITE(" in (project / "ec" / d / "kernel.c").read_text()


def test_preprocess_only_passes_through(project, cc):
    ours = fcc("-E", "-DEXTRA=1", "kernel.c", cwd=project).stdout
    theirs = subprocess.run([cc, "-E", "-DEXTRA=1", "kernel.c"], cwd=project,
                            capture_output=True, text=True, check=True).stdout
    assert ours == theirs and "foresight" not in ours
    m = fcc("-MM", "kernel.c", cwd=project).stdout
    assert m.startswith("kernel.o: kernel.c grid.h")


def test_response_file(project):
    (project / "args.rsp").write_text('-c kernel.c\n-o "k obj.o" -DNAME="x y"\n')
    fcc("@args.rsp", cwd=project)
    assert (project / "k obj.o").is_file()


def test_x_c_on_another_suffix(project):
    (project / "kernel.inc").write_text(KERNEL)
    fcc("-x", "c", "-c", "kernel.inc", cwd=project)
    assert (project / "kernel.o").is_file()


def test_rejected_program_has_file_line_nonzero_exit_and_no_output(tmp_path, cc):
    (tmp_path / "bad.c").write_text(
        "double A[1000][1000];\nint main(void) {\n  double s = 0;\n"
        "  for (int j = 0; j < 1000; j++)\n    for (int i = 0; i < 1000; i++)\n"
        "      s += A[i][j] + undeclared;\n  return (int)s;\n}\n")
    (tmp_path / "bad").write_text("stale")
    p = fcc("bad.c", "-o", "bad", cwd=tmp_path, check=False)
    assert p.returncode != 0
    assert "bad.c:6" in p.stderr and "undeclared" in p.stderr
    assert "foresight-cc-" not in p.stderr
    assert not (tmp_path / "bad").exists()
    p = fcc("-c", "bad.c", cwd=tmp_path, check=False)
    assert p.returncode != 0 and not (tmp_path / "bad.o").exists()
    # A plain syntax error: cc's diagnostics, not libclang's on top.
    (tmp_path / "syntax.c").write_text("int main(void) {\n  int s = 0\n  return s;\n}\n")
    p = fcc("-c", "syntax.c", cwd=tmp_path, check=False)
    assert p.returncode != 0 and "syntax.c:3" in p.stderr and "libclang" not in p.stderr
    assert not (tmp_path / "syntax.o").exists()


def test_diagnostics_of_a_transformed_file_point_at_the_user_line(project):
    text = KERNEL.replace("  return s;", "  int unused;\n  return s;")
    (project / "kernel.c").write_text(text)
    p = fcc("-Wall", "-c", "kernel.c", "--emit-c", "em", cwd=project)
    assert "foresight" in (project / "em" / "kernel.c").read_text()  # it was transformed
    assert "kernel.c:8" in p.stderr and "unused" in p.stderr


def test_no_prefetch_and_emit_c(project):
    fcc("--emit-c", "P", "-c", "kernel.c", "-o", "p.o", cwd=project)
    fcc("--no-prefetch", "--emit-c", "O", "-c", "kernel.c", "-o", "o.o", cwd=project)
    p_text = (project / "P" / "kernel.c").read_text()
    o_text = (project / "O" / "kernel.c").read_text()
    assert "FORESIGHT_SITE(" in p_text and '#line 1 "kernel.c"' in p_text
    assert o_text == KERNEL  # the baseline: no hints at all
    fcc("--no-prefetch", "-o", "base", "kernel.c", "main.c", cwd=project)
    assert run("./base", project) == EXPECTED


def test_report_text_and_json(project):
    p = fcc("--report", "--report-json", "r.json", "-c", "kernel.c", "main.c", cwd=project)
    assert "kernel.c:5: loop nest in colsum()" in p.stderr
    entries = json.loads((project / "r.json").read_text())
    assert {e["source"] for e in entries} == {"kernel.c"}
    assert len(entries) == 2 and all("line" in e for e in entries)


def test_report_json_per_c_input_for_builds_that_compile_one_file_per_command(project):
    # Under make each command compiles one file: a directory, or a name with %, gives
    # each its own report.
    (project / "reports").mkdir()
    fcc("--report-json", "reports", "-c", "kernel.c", cwd=project)
    fcc("--report-json", "reports/", "-c", "main.c", cwd=project)
    fcc("--report-json", "reports/%.json", "-c", "kernel.c", "-o", "k2.o", cwd=project)
    assert sorted(p.name for p in (project / "reports").iterdir()) == [
        "kernel.c.json", "kernel.json", "main.c.json"]
    entries = json.loads((project / "reports" / "kernel.json").read_text())
    assert {e["source"] for e in entries} == {"kernel.c"} and len(entries) == 2
    assert json.loads((project / "reports" / "main.c.json").read_text()) == []


def test_a_command_that_writes_no_report_leaves_the_report_directory_alone(project):
    # -E (and -M, a link of objects) transforms nothing and writes no report: no
    # subdirectory is made for one either.
    (project / "reports").mkdir()
    (project / "sub").mkdir()
    (project / "sub" / "k.c").write_text((project / "kernel.c").read_text())
    fcc("--report-json", "reports/", "-I.", "-E", "sub/k.c", "-o", "k.i", cwd=project)
    assert list((project / "reports").iterdir()) == []
    fcc("--report-json", "reports/", "-I.", "-c", "sub/k.c", "-o", "k.o", cwd=project)
    assert [p.name for p in (project / "reports" / "sub").iterdir()] == ["k.c.json"]


def test_gcc_openmp_header_is_read(tmp_path):
    # GCC 12's <omp.h> (only gcc has it) names a deallocator in a malloc attribute, which
    # clang rejects: the file's nests are still analysed.
    if not Path(subprocess.run(["cc", "-print-file-name=include/omp.h"], capture_output=True,
                               text=True).stdout.strip()).is_file():
        pytest.skip("the C compiler has no <omp.h>")
    (tmp_path / "o.c").write_text(
        "#include <omp.h>\n#include <stdio.h>\ndouble a[1 << 20];\n"
        "int main(void) {\n  double s = 0;\n  for (int i = 0; i < (1 << 20); i++)\n"
        "    s += a[i];\n  printf(\"%g %d\\n\", s, omp_get_max_threads() > 0);\n"
        "  return 0;\n}\n")
    p = fcc("--report", "-fopenmp", "-o", "o", "o.c", cwd=tmp_path)
    assert "cannot parse" not in p.stderr and "o.c:6: loop nest in main()" in p.stderr
    assert run("./o", tmp_path) == "0 1\n"


def test_a_file_libclang_cannot_parse_is_not_reported_as_having_no_loops(tmp_path):
    (tmp_path / "nested.c").write_text(
        "int f(int *a) {\n  int g(int x) { return x + 1; }\n  int s = 0;\n"
        "  for (int i = 0; i < 9; i++) s += a[i];\n  return g(s);\n}\n")
    p = fcc("--report", "-c", "nested.c", cwd=tmp_path)
    assert "no loop nests analysed (see the warnings above)" in p.stderr
    assert "no loop nests found" not in p.stderr


def test_foresight_cc_script_and_underlying_compiler_words(project):
    exe = [str(BIN / "foresight-cc")]
    fcc("-c", "kernel.c", exe=exe, cwd=project)
    fcc("-o", "prog", "main.c", "kernel.o", exe=exe, cwd=project)
    assert run("./prog", project) == EXPECTED
    (project / "v.c").write_text("int v(void) { return VALUE; }\n")
    fcc("-c", "v.c", exe=exe, cwd=project, env={"FORESIGHT_CC": "cc -DVALUE=3"})
    p = fcc("-c", "v.c", exe=exe, cwd=project, check=False,
            env={"FORESIGHT_CC": str(BIN / "foresight-cc")})
    assert p.returncode == 2 and "FORESIGHT_CC" in p.stderr


@pytest.mark.parametrize("args, word", [
    (["--fs-mem", "lots"], "--fs-mem"),
    (["--fs-mem=-1G"], "--fs-mem"),
    (["--fs-page", "3000"], "power of two"),
    (["--fs-preset", "fast"], "adaptive or paper"),
    (["--fs-latency", "soon"], "--fs-latency"),
    (["--emit-c"], "needs a value"),
    (["--emit-c", "-O2"], "not the option -O2"),
    (["--report-json", "-c"], "not the option -c"),
])
def test_bad_own_option_values_exit_2(project, args, word):
    p = fcc("-c", "kernel.c", *args, cwd=project, check=False)
    assert p.returncode == 2 and word in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and not (project / "kernel.o").exists()


def test_good_own_option_values(project):
    fcc("--fs-mem", "64M", "--fs-page=4K", "--fs-block", "16K", "--fs-preset", "paper",
        "--fs-latency", "100000", "-c", "kernel.c", cwd=project)


def test_gcc_only_code_is_compiled_unchanged_with_a_warning(tmp_path, cc):
    (tmp_path / "nested.c").write_text(
        "int f(int *a) {\n  int g(int x) { return x + 1; }\n  int s = 0;\n"
        "  for (int i = 0; i < 9; i++) s += a[i];\n  return g(s);\n}\n")
    p = fcc("-c", "nested.c", cwd=tmp_path)
    assert "warning" in p.stderr and "nested.c" in p.stderr
    assert (tmp_path / "nested.o").is_file()


def test_a_failing_transformation_never_loses_the_build(project, monkeypatch, capfd):
    from foresight.compiler import pipeline
    from foresight.driver.main import main

    def boom(*a, **k):
        raise RuntimeError("analysis bug")

    monkeypatch.setattr(pipeline, "transform", boom)
    monkeypatch.chdir(project)
    assert main(["-o", "prog", "kernel.c", "main.c"]) == 0
    assert "analysis bug" in capfd.readouterr().err
    assert run("./prog", project) == EXPECTED


def test_transformed_text_the_compiler_rejects_falls_back_to_the_original(
        project, monkeypatch, capfd):
    from foresight.compiler import pipeline
    from foresight.compiler.options import Transformed
    from foresight.driver.main import main

    def broken(source, clang_args, opts):
        return Transformed("#include <foresight.h>\nthis is not C;\n", True, [], [])

    monkeypatch.setattr(pipeline, "transform", broken)
    monkeypatch.chdir(project)
    assert main(["-Wall", "-Werror", "-MD", "-c", "kernel.c"]) == 0
    err = capfd.readouterr().err
    assert "kernel.c: warning: foresight cc: the transformed code did not compile" in err
    assert (project / "kernel.o").is_file()
    assert (project / "kernel.d").read_text().startswith("kernel.o: kernel.c")
    # A file that is wrong as written still fails, with cc's diagnostics on the original.
    (project / "kernel.c").write_text(KERNEL + "int broken(void) { return nope; }\n")
    assert main(["-c", "kernel.c"]) != 0
    err = capfd.readouterr().err
    assert "kernel.c:15" in err and "nope" in err and "transformed" not in err
    assert not (project / "kernel.o").exists()


@pytest.mark.parametrize("flags", [[], ["-Wall", "-Werror"]])
def test_transformed_text_that_means_something_else_falls_back_to_the_original(
        tmp_path, monkeypatch, capfd, flags):
    # A transformed text that compiles but sees a function the file declares undeclared
    # (the runtime's header ahead of the file's _GNU_SOURCE once left strcasestr() an
    # int: a pointer cut to 32 bits, a crash at run time) is not the user's program.
    from foresight.compiler import pipeline
    from foresight.compiler.options import Transformed
    from foresight.driver.main import main

    src = ('#define _GNU_SOURCE\n#include <stdio.h>\n#include <string.h>\n'
           'int main(void) { char t[] = "a Column"; puts(strcasestr(t, "col")); return 0; }\n')
    (tmp_path / "f.c").write_text(src)

    def header_first(source, clang_args, opts):
        return Transformed("#include <stdio.h>\n#line 1 \"f.c\"\n" + src, True, [], [])

    monkeypatch.setattr(pipeline, "transform", header_first)
    monkeypatch.chdir(tmp_path)
    assert main([*flags, "f.c", "-o", "f"]) == 0
    err = capfd.readouterr().err
    assert "f.c: warning: foresight cc: the transformed code drew " \
        "[-Wimplicit-function-declaration], which the original does not" in err
    assert "strcasestr" not in err       # the original's diagnostics: none
    assert run("./f", tmp_path) == "Column\n"


FLAG_MACRO = """#include <stdio.h>
#include <stdlib.h>
#ifdef MACRO
#define STOP_IF(flag) if (flag) break
#else
#define STOP_IF(flag) (void)(flag)
#endif
static volatile int cancelled;
static double sum(const double *a, long n) {
    double s = 0;
    for (long i = 0; i < n; i++) {
        s += a[i];
        if (i == 1000) cancelled = 1;
        STOP_IF(cancelled);
    }
    return s;
}
int main(void) {
    long n = 1L << 21;
    double *a = malloc(n * sizeof *a);
    for (long i = 0; i < n; i++) a[i] = 1.0;
    printf("%g\\n", sum(a, n));
    return 0;
}
"""


@pytest.mark.parametrize("flag, macro", [("-pthread", "_REENTRANT"), ("-mavx2", "__AVX2__"),
                                         ("-fno-math-errno", "__NO_MATH_ERRNO__")])
def test_macros_the_users_flags_define_are_the_analysis_macros_too(tmp_path, cc, flag, macro):
    # A helper's probe: under -pthread cc defined _REENTRANT, libclang (not given the flag)
    # did not, saw no `break` in the loop and split it into strips that the break only
    # left one of: 2.09715e+06 printed for 1001, with hints on.
    (tmp_path / "f.c").write_text(FLAG_MACRO.replace("MACRO", macro))
    fcc("-O2", flag, "f.c", "-o", "f", cwd=tmp_path)
    got = subprocess.run(["./f"], cwd=tmp_path, capture_output=True, text=True, check=True,
                         env={**os.environ, "FORESIGHT_INCORE": "hint"}).stdout
    assert got == "1001\n"


PACKED = """#define _GNU_SOURCE
PRAGMA
#include <stdio.h>
#include <stdlib.h>
struct rec { char tag; double v; };
int main(void) {
    long n = 1L << 21;
    struct rec *r = malloc(n * sizeof *r);
    double s = 0;
    for (long i = 0; i < n; i++) { r[i].tag = (char)i; r[i].v = 1.0; }
    for (long i = 0; i < n; i++) s += r[i].v;
    printf("%zu %g\\n", sizeof *r, s);
    return 0;
}
"""


@pytest.mark.parametrize("flags, pragma", [(["-fpack-struct"], ""), (["-fpack-struct=1"], ""),
                                           ([], "#pragma pack(push, 1)")])
def test_the_programs_packing_leaves_the_runtimes_structures_alone(tmp_path, cc, flags,
                                                                   pragma):
    # A helper's probe: -fpack-struct packed foresight.h's structures too, and the
    # hinted program crashed in the library (which walks them with natural alignment).
    (tmp_path / "f.c").write_text(PACKED.replace("PRAGMA", pragma))
    fcc("-O2", *flags, "f.c", "-o", "f", cwd=tmp_path)
    subprocess.run(["cc", "-O2", *flags, "f.c", "-o", "plain"], cwd=tmp_path, check=True)
    env = {**os.environ, "FORESIGHT_INCORE": "hint", "FORESIGHT_STATS": str(tmp_path / "s.json")}
    got = subprocess.run(["./f"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert got.returncode == 0, got.stderr
    assert got.stdout == run("./plain", tmp_path)
    assert json.loads((tmp_path / "s.json").read_text())


def test_startup_path_does_not_import_the_compiler(project):
    code = ("import sys; from foresight.cli import main; rc = main(['cc', '-E', 'kernel.c']);"
            "bad = [m for m in sys.modules if m.startswith(('clang', 'matplotlib', 'rich',"
            " 'foresight.compiler.pipeline'))]; sys.exit(rc or bool(bad))")
    p = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True)
    assert p.returncode == 0, p.stderr


def test_libraries_stay_after_the_objects_that_need_them(tmp_path, cc):
    # `cc a.c -o a -lm`: the linker resolves -lm only for objects before it, so the
    # transformed object must take the source's place, not move behind the libraries.
    (tmp_path / "m.c").write_text(
        "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
        "int main(int argc, char **argv) {\n  (void)argc;\n"
        "  long n = atol(argv[1]);\n  double *a = malloc((size_t)n * sizeof *a), s = 0;\n"
        "  for (long i = 0; i < n; i++)\n    a[i] = sqrt((double)i);\n"
        "  for (long i = 0; i < n; i++)\n    s += a[i];\n"
        "  printf(\"%.3f\\n\", s);\n  free(a);\n  return 0;\n}\n")
    fcc("-O2", "m.c", "-o", "m", "-lm", cwd=tmp_path)
    out = subprocess.run(["./m", "100"], cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout
    assert out == f"{sum(i ** 0.5 for i in range(100)):.3f}\n"


def test_a_link_builds_compile_steps_leave_the_linkers_options_out(project):
    # clang warns of linker options in a compile step ("-lm: 'linker' input unused"), an
    # error under -Werror; `clang-16 x.c -o x -lm -Werror` itself links cleanly.
    if shutil.which("clang-16") is None:
        pytest.skip("clang-16 is not installed (make setup installs it)")
    p = fcc("-O2", "-Wall", "-Werror", "kernel.c", "main.c", "-o", "prog", "-lm", "-L.",
            "-Wl,-z,now", "-rdynamic", cwd=project, env={"FORESIGHT_CC": "clang-16"})
    assert p.stderr == ""
    assert run("./prog", project) == EXPECTED


def _listing(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(d.rglob("*"))}


@pytest.mark.parametrize("args", [
    ["-c", "kernel.c", "-o", "kernel.c"],
    ["-S", "kernel.c", "-o", "kernel.c"],
    ["kernel.c", "main.c", "-o", "kernel.c"],
    ["--no-prefetch", "-c", "kernel.c", "-o", "kernel.c"],
    ["-E", "kernel.c", "-o", "kernel.c"],
    ["-c", "kernel.c", "-o", "sym.c"],            # a symbolic link to kernel.c
    ["-c", "kernel.c", "-o", "hard.c"],           # a hard link to kernel.c
    ["-c", "kernel.c", "-MD", "-MF", "kernel.c"],
    ["-c", "kernel.c", "-MD", "-MF", "./main.c", "main.c"],
    ["-c", "kernel.c", "--emit-c", "."],          # the source's own directory
    ["-c", "kernel.c", "--emit-c", "{dir}"],
    ["-c", "kernel.c", "--report-json", "kernel.c"],
    ["-c", "kernel.c", "kernel.o"],               # cc's default output is an input
    ["@args.rsp", "-o", "args.rsp"],
])
def test_never_writes_over_an_input(project, args):
    (project / "sym.c").symlink_to("kernel.c")
    os.link(project / "kernel.c", project / "hard.c")
    (project / "kernel.o").write_bytes(b"an object the user keeps")
    (project / "args.rsp").write_text("-c kernel.c\n")
    before = _listing(project)
    p = fcc(*[a.format(dir=project) for a in args], cwd=project, check=False)
    assert p.returncode == 1, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "refusing to write over it" in lines[0], p.stderr
    assert "Traceback" not in p.stderr
    assert _listing(project) == before  # nothing written, nothing removed


def test_outputs_that_are_not_inputs_are_still_written(project):
    # /dev/null as input and output (configure scripts), an existing object replaced.
    fcc("-E", "-x", "c", "/dev/null", "-o", "/dev/null", cwd=project)
    (project / "kernel.o").write_bytes(b"stale")
    fcc("-c", "kernel.c", cwd=project)
    assert (project / "kernel.o").read_bytes() != b"stale"


def test_report_json_is_checked_before_compiling(project):
    before = _listing(project)
    for dest, word in (("no/such/dir/r.json", ": cannot write"),
                       ("no/dir/", "kernel.c.json: cannot write")):
        p = fcc("-c", "kernel.c", "--report-json", dest, cwd=project, check=False)
        assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
        assert f"--report-json {dest}{word}" in p.stderr
        assert _listing(project) == before  # no kernel.o, no D.tmp
    # A file that cannot take the report once the object is written: one line, exit 2.
    p = fcc("-c", "kernel.c", "--report-json", "/dev/full", cwd=project, check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "--report-json /dev/full: cannot write" in p.stderr


def test_report_json_is_written_whole_through_links_and_to_devices(project):
    (project / "link.json").symlink_to("r.json")
    fcc("-c", "kernel.c", "--report-json", "link.json", cwd=project)
    assert (project / "link.json").is_symlink()  # the file it names was replaced
    assert json.loads((project / "r.json").read_text())[0]["source"] == "kernel.c"
    assert not [p.name for p in project.iterdir() if p.name.endswith(".tmp")]
    p = fcc("-c", "kernel.c", "--report-json", "/dev/stdout", cwd=project)
    assert json.loads(p.stdout)[0]["source"] == "kernel.c"


SLOW_CC = """\
#!{python}
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_DFL)  # die as cc does, without a traceback
args = sys.argv[1:]
out = args[args.index("-o") + 1] if "-o" in args else "a.out"
with open(os.environ["PIDS"], "a") as f:
    f.write(f"{{os.getpid()}}\\n")
if os.environ.get("PARTIAL"):
    with open(out, "w") as f:
        f.write("half an object")
time.sleep(2)
with open(out, "w") as f:
    f.write("written after the driver was told to stop")
"""


def _interrupt(project: Path, sig: int, args: list[str], partial: bool) -> str:
    """Run foresight cc with a compiler that takes 2 s, signal it once the compiler runs,
    check that it stopped with nothing left running or left behind; its stderr."""
    slow = project / "slow-cc"
    slow.write_text(SLOW_CC.format(python=sys.executable))
    slow.chmod(0o755)
    tmp, pids = project / "tmp", project / "pids"
    tmp.mkdir()
    env = {**os.environ, "FORESIGHT_CC": str(slow), "TMPDIR": str(tmp), "PIDS": str(pids),
           "PARTIAL": "1" if partial else ""}
    p = subprocess.Popen([FORESIGHT, "cc", *args], cwd=project, env=env, text=True,
                         stderr=subprocess.PIPE,
                         # The signal under test as a terminal would deliver it, also
                         # where this suite runs ignoring it (nohup, a background job).
                         preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while not (pids.exists() and pids.read_text().endswith("\n")):
        assert p.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    p.send_signal(sig)
    err = p.communicate(timeout=30)[1]
    assert p.returncode == 128 + sig, err
    assert err == f"foresight cc: interrupted by {signal.Signals(sig).name}\n"
    for pid in map(int, pids.read_text().split()):  # reaped: no compiler left running
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    time.sleep(2.5)  # past the moment the compiler would have written its output
    assert list(tmp.iterdir()) == []
    return err


@pytest.mark.parametrize("sig, args, partial", [
    (signal.SIGTERM, ["-c", "kernel.c", "-o", "k.o"], False),       # transformed
    (signal.SIGTERM, ["-c", "kernel.c", "-o", "k.o"], True),        # half written
    (signal.SIGINT, ["--no-prefetch", "kernel.c", "main.c", "-o", "k.o"], False),
    (signal.SIGHUP, ["-MD", "kernel.c", "main.c", "-o", "k.o"], True),  # link
])
def test_a_signal_stops_the_underlying_compiler_and_cleans_up(project, sig, args, partial):
    _interrupt(project, sig, args, partial)
    assert not (project / "k.o").exists() and not (project / "k.d").exists()


def test_an_output_the_interrupted_compiler_did_not_touch_is_kept(project):
    # As make: a target the interrupted command did not write stays as it was.
    (project / "k.o").write_bytes(b"from the last build")
    _interrupt(project, signal.SIGTERM, ["-c", "kernel.c", "-o", "k.o"], False)
    assert (project / "k.o").read_bytes() == b"from the last build"


C89_KERNEL = """\
double A[4096][512];
double colsum(void) {
  double s = 0;
  int i, j;
  for (j = 0; j < 512; j++)
    for (i = 0; i < 4096; i++)
      s += A[i][j];
  return s;
}
"""


@pytest.mark.parametrize("std", [["-std=c89"], ["-ansi"], ["--std=gnu90"],
                                 ["-std=c99", "-ansi"], ["-std=iso9899:199409"]])
def test_c90_is_compiled_unchanged_with_one_note_under_report(tmp_path, cc, std):
    # foresight.h needs C99 (inline): a known limit, not a bug to report.
    (tmp_path / "k.c").write_text(C89_KERNEL)
    strict = [*std, "-pedantic", "-Wall", "-Wextra", "-Werror"]
    p = fcc(*strict, "--emit-c", "em", "-c", "k.c", cwd=tmp_path)
    assert p.stderr == "" and (tmp_path / "k.o").is_file()
    assert (tmp_path / "em" / "k.c").read_text() == C89_KERNEL  # what was compiled
    p = fcc(*strict, "--report", "-c", "k.c", cwd=tmp_path)
    assert p.stderr.count("\n") == 1 and "need C99 or later" in p.stderr, p.stderr
    assert std[-1] in p.stderr and "please report" not in p.stderr


def test_a_later_std_than_c90_still_gets_hints(tmp_path, cc):
    (tmp_path / "k.c").write_text(C89_KERNEL)
    p = fcc("-ansi", "-std=c99", "--emit-c", "em", "-c", "k.c", cwd=tmp_path)
    assert p.stderr == "" and "FORESIGHT_SITE(" in (tmp_path / "em" / "k.c").read_text()


def test_the_fallback_warning_is_one_readable_line(project, monkeypatch, capfd):
    from foresight.compiler import pipeline
    from foresight.compiler.options import Transformed
    from foresight.driver.main import main

    name = "not_declared_" + "x" * 400

    def broken(source, clang_args, opts):
        return Transformed(f"int broken = {name};\n", True, [], [])

    monkeypatch.setattr(pipeline, "transform", broken)
    monkeypatch.chdir(project)
    assert main(["-fdiagnostics-color=always", "-c", "kernel.c"]) == 0
    lines = capfd.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kernel.c: warning: foresight cc:")
    assert name in lines[0] and "\x1b" not in lines[0]  # whole, without colour codes


def test_help_lists_own_options_and_leaves_cc_help_forms_to_cc(project, cc):
    own = ["--no-prefetch", "--no-indirect", "--report", "--report-json", "--emit-c",
           "--fs-mem", "--fs-page", "--fs-block", "--fs-preset", "--fs-latency",
           "--fs-no-sparse-rows"]
    for exe in ([FORESIGHT, "cc"], [str(BIN / "foresight-cc")]):
        p = fcc("--help", exe=exe, cwd=project, env={"FORESIGHT_CC": "false"})
        for name in own:  # one line each
            assert any(line.split()[:1] == [name] for line in p.stdout.splitlines()), name
        assert "$FORESIGHT_CC (now: false)" in p.stdout and p.stderr == ""
    theirs = subprocess.run([cc, "--help=warnings"], capture_output=True, text=True)
    if theirs.returncode == 0:  # gcc's --help=CLASS
        assert fcc("--help=warnings", cwd=project).stdout == theirs.stdout


def test_help_into_a_reader_that_leaves_is_no_traceback(project):
    """`foresight cc --help | head -0`: the pipe's reader is gone; no traceback."""
    for exe in ([FORESIGHT, "cc"], [str(BIN / "foresight-cc")], [FORESIGHT]):
        r, w = os.pipe()
        os.close(r)   # every write to the pipe fails with EPIPE
        p = subprocess.run([*exe, "--help"], cwd=project, stdout=w, stderr=subprocess.PIPE,
                           text=True, timeout=60)
        os.close(w)
        assert "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr


def test_what_cc_is_told_to_assume_is_read_from_its_arguments():
    from foresight.driver.args import own_definitions, strict_aliasing
    # C's aliasing rules hold unless -fno-strict-aliasing (the last of the two) says not.
    assert all(strict_aliasing(a) for a in ([], ["-O1"], ["-O2"], ["-O3"]))
    assert not strict_aliasing(["-O3", "-fno-strict-aliasing"])
    assert not strict_aliasing(["-fno-strict-aliasing", "-O2"])
    assert strict_aliasing(["-fno-strict-aliasing", "-fstrict-aliasing"])
    # In position-independent code for a shared object a definition may be interposed.
    assert own_definitions([]) and own_definitions(["-fPIE"])
    assert not own_definitions(["-O2", "-fPIC"]) and not own_definitions(["-fpic"])
    assert own_definitions(["-fPIC", "-fno-semantic-interposition"])
    assert own_definitions(["-fPIC", "-fno-PIC"])
    # Floating-point arithmetic may be reordered under fast math, -Ofast's until a later -O.
    from foresight.driver.args import reassociates
    assert not any(reassociates(a) for a in ([], ["-O3"], ["-Ofast", "-O2"],
                                             ["-ffast-math", "-fno-fast-math"]))
    assert all(reassociates(a) for a in (["-Ofast"], ["-O2", "-ffast-math"],
                                         ["-fassociative-math"],
                                         ["-funsafe-math-optimizations", "-O3"]))


FAST_MATH = """\
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 4000000;
    double *a = malloc(n * sizeof *a);
    long *k = malloc(n * sizeof *k);
    for (long i = 0; i < n; i++) { a[i] = 1.0 / (double)(i + 1); k[i] = i; }
    double s = 0;
    for (long i = 0; i < n; i++)
        s += a[i] * a[i];
    long t = 0;
    for (long i = 0; i < n; i++)
        t += k[i];
    printf("%.17g %ld\\n", s, t);
    return 0;
}
"""


def test_fast_math_leaves_floating_point_nests_unhinted(tmp_path):
    # Strips the run sizes let cc sum in another order under -ffast-math: a probe's sum
    # differed in its last digits with hints on.  Integer nests keep their hints.
    (tmp_path / "f.c").write_text(FAST_MATH)
    p = fcc("-O3", "-ffast-math", "--report", "-o", "f", "f.c", cwd=tmp_path)
    assert "f.c:10: loop nest in main()\n  left unchanged: computes in floating point, which " \
           "-ffast-math" in p.stderr, p.stderr
    assert "f.c:13: loop nest in main()\n  left unchanged" not in p.stderr
    plain = subprocess.run(["./f"], cwd=tmp_path, capture_output=True, text=True).stdout
    hinted = subprocess.run(["./f"], cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "FORESIGHT_INCORE": "hint",
                                 "FORESIGHT_MEM": "1M"}).stdout
    assert plain == hinted
    p = fcc("-O3", "--report", "-o", "g", "f.c", cwd=tmp_path)
    assert "computes in floating point" not in p.stderr
    # fast math the file asks for itself
    (tmp_path / "p.c").write_text('#pragma GCC optimize ("fast-math")\n' + FAST_MATH)
    p = fcc("-O3", "--report", "-o", "p", "p.c", cwd=tmp_path)
    assert "computes in floating point" in p.stderr


def test_the_analysis_gets_the_flags_that_change_sizes_and_macros():
    """Type sizes (-fshort-wchar), layouts (-fpack-struct=4) and predefined macros (-O2:
    __OPTIMIZE__, -march: __AVX2__, -ffast-math) are the analysis' too; code generation
    and warnings are not."""
    from foresight.driver.args import preprocessor_args

    args = ["-O2", "-march=native", "-fshort-wchar", "-fpack-struct=4", "-ffast-math",
            "-Wall", "-g", "-fPIC", "-o", "x.o", "-c", "x.c", "-DN=3", "-I", "inc"]
    assert preprocessor_args(args) == ["-O2", "-march=native", "-fshort-wchar",
                                       "-fpack-struct=4", "-ffast-math", "-DN=3", "-I", "inc"]


def test_a_quoted_include_finds_the_sources_own_header_before_the_users_iquote(tmp_path):
    """`#include "config.h"` looks beside the source first, then in -iquote directories:
    the transformed copy (compiled elsewhere) must find the source's config.h, not one
    in the user's -iquote directory."""
    foresight = str(Path(sys.prefix) / "bin" / "foresight")
    (tmp_path / "src").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "src" / "config.h").write_text("#define SCALE 1\n")
    (tmp_path / "other" / "config.h").write_text("#define SCALE 2\n")
    (tmp_path / "src" / "p.c").write_text(
        '#include <stdio.h>\n#include <stdlib.h>\n#include "config.h"\nint main(void) {\n'
        "  long n = 1L << 18; double *a = calloc(n, 8), s = 0;\n"
        "  for (long i = 0; i < n; i++) s += a[i];\n"
        '  printf("%d %.0f\\n", SCALE, s);\n  return 0;\n}\n')
    subprocess.run([foresight, "cc", "-O2", "-iquote", "other", "-o", "p", "src/p.c"],
                   cwd=tmp_path, check=True)
    out = subprocess.run([str(tmp_path / "p")], capture_output=True, text=True).stdout
    assert out == "1 0\n"


def test_a_c99_inline_definition_links_as_with_cc(tmp_path):
    """`inline double dot(...)` (no static, no extern, no external definition anywhere):
    cc inlines every call, so the program links; a hinted copy might not be inlined and
    leave `dot` undefined, so its nest is left alone."""
    foresight = str(Path(sys.prefix) / "bin" / "foresight")
    src = tmp_path / "i.c"
    src.write_text("#include <stdio.h>\n#include <stdlib.h>\n"
                   "inline double dot(const double *x, long n) {\n  double s = 0;\n"
                   "  for (long i = 0; i < n; i++) s += x[i] * x[i];\n  return s;\n}\n"
                   "int main(void) {\n  long n = 1L << 20; double *x = malloc(n * sizeof *x);\n"
                   "  for (long i = 0; i < n; i++) x[i] = i % 3;\n"
                   '  printf("%.0f\\n", dot(x, n));\n  return 0;\n}\n')
    r = subprocess.run([foresight, "cc", "-O2", "--report", "-o", str(tmp_path / "i"),
                        str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "in an inline definition" in r.stderr
    out = subprocess.run([str(tmp_path / "i")], capture_output=True, text=True).stdout
    assert out == "1747625\n"


FORESIGHT_H_CASES = {
    # A project header called foresight.h in an -I directory is the program's; the hints
    # still get the runtime's header (included by its absolute path).
    "own": ('#include "foresight.h"', ['-Iinc'], '  printf("v%d %.0f\\n", PROJECT_VERSION, s);\n',
            "v3 0\n"),
    # A program that includes <foresight.h> to call the API itself: the analysis finds
    # the header as cc does (it was "compiled unchanged": libclang could not find it), and
    # -Werror's check of the file as written finds it too (it failed).
    "runtimes": ("#include <foresight.h>", ["-Wextra"],
                 '  FORESIGHT_SITE(head, "a head");\n  foresight_prefetch_at(&head, a, 4096);\n'
                 '  printf("%.0f\\n", s);\n', "0\n"),
}


@pytest.mark.parametrize("case", sorted(FORESIGHT_H_CASES))
def test_a_foresight_h_the_program_includes_is_found_as_cc_finds_it(tmp_path, case):
    include, flags, tail, expected = FORESIGHT_H_CASES[case]
    foresight = str(Path(sys.prefix) / "bin" / "foresight")
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "foresight.h").write_text("#define PROJECT_VERSION 3\n")
    (tmp_path / "p.c").write_text(
        f"#include <stdio.h>\n#include <stdlib.h>\n{include}\nint main(void) {{\n"
        "  long n = 1L << 18; double *a = calloc(n, 8), s = 0;\n"
        f"  for (long i = 0; i < n; i++) s += a[i];\n{tail}  return 0;\n}}\n")
    r = subprocess.run([foresight, "cc", "-O2", "-Wall", "-Werror", *flags, "--report",
                        "-o", "p", "p.c"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0 and "warning" not in r.stderr and "1 hinted" in r.stderr, r.stderr
    out = subprocess.run([str(tmp_path / "p")], capture_output=True, text=True).stdout
    assert out == expected


def test_mmd_lists_what_cc_lists_not_the_runtimes_header(tmp_path):
    """-MMD -MP of a hinted file: the same .d as cc's (the runtime's header, which only
    the hints include, is no dependency of the user's build)."""
    foresight = str(Path(sys.prefix) / "bin" / "foresight")
    (tmp_path / "k.h").write_text("#define N (1L << 18)\n")
    (tmp_path / "k.c").write_text(
        '#include <stdlib.h>\n#include "k.h"\ndouble f(void) {\n'
        "  double *a = calloc(N, 8), s = 0;\n  for (long i = 0; i < N; i++) s += a[i];\n"
        "  return s;\n}\n")
    deps = []
    for cc in (["cc"], [foresight, "cc"]):
        subprocess.run([*cc, "-O2", "-MMD", "-MP", "-c", "k.c"], cwd=tmp_path, check=True)
        deps.append((tmp_path / "k.d").read_text())
    assert deps[1] == deps[0] == "k.o: k.c k.h\nk.h:\n"


def test_misleading_indentation_is_reported_as_cc_reports_it(tmp_path):
    """`for (...) s += a[i]; printf(...);` on one line: the hints move the printf out of
    the loop's text, so the transformed compile is silent; cc's verdict on the original
    (a warning, an error under -Werror and no object) must still be the user's."""
    foresight = str(Path(sys.prefix) / "bin" / "foresight")
    (tmp_path / "m.c").write_text(
        "#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n"
        "  long n = 1L << 18; double *a = calloc(n, 8), s = 0;\n"
        '  for (long i = 0; i < n; i++) s += a[i]; printf("%f\\n", s);\n'
        "  return 0;\n}\n")
    for werror, rc in (([], 0), (["-Werror"], 1)):
        r = subprocess.run([foresight, "cc", "-O2", "-Wall", *werror, "-c", "m.c"],
                           cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == rc and "misleading-indentation" in r.stderr, r.stderr
        assert (tmp_path / "m.o").exists() == (rc == 0)
        (tmp_path / "m.o").unlink(missing_ok=True)


def test_report_json_per_c_input_of_one_command(project):
    # One command compiling several files: a directory or a % name writes one report per
    # file, each with its own entries (a helper's probe: one file held both).
    (project / "reports").mkdir()
    fcc("--report-json", "reports/", "-c", "./kernel.c", "main.c", cwd=project)
    fcc("--report-json", "reports/%.json", "-c", "kernel.c", "main.c", cwd=project)
    names = sorted(p.name for p in (project / "reports").iterdir())
    assert names == ["kernel.c.json", "kernel.json", "main.c.json", "main.json"]
    for name, source in (("kernel.c.json", "./kernel.c"), ("kernel.json", "kernel.c")):
        entries = json.loads((project / "reports" / name).read_text())
        assert {e["source"] for e in entries} == {source} and len(entries) == 2
    for name in ("main.c.json", "main.json"):
        assert json.loads((project / "reports" / name).read_text()) == []


def test_report_json_pattern_refuses_two_inputs_of_one_name(project):
    # `%` is a file's name without its extension: kernel.c and sub/kernel.c of one
    # command would share reports/kernel.json (their entries were merged into it).
    (project / "sub").mkdir()
    (project / "sub" / "kernel.c").write_text("int other(void) { return 2; }\n")
    p = fcc("--report-json", "reports/%.json", "-c", "kernel.c", "sub/kernel.c",
            cwd=project, check=False)
    assert p.returncode == 2 and not (project / "reports").exists()
    assert p.stderr.strip() == ("foresight cc: error: --report-json reports/%.json: kernel.c "
                                "and sub/kernel.c would both write reports/kernel.json (a "
                                "directory, --report-json reports/, keeps them apart)")
    assert not list(project.glob("*.o")) and not list((project / "sub").glob("*.o"))
