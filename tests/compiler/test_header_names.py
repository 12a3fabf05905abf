"""foresight.h against the program's macros.

The header is included after the program's own headers when the file begins with
feature-test macros, and a -D or -include reaches it anyway: a program that defines
`line`, `unused`, `site` or `omp_in_parallel()` as macros must still get a header that
compiles and hints that work.  The header saves, undefines and restores every name of
its own (parameters, members, locals, the C library's functions it calls); these tests
check that list against the header's text, break every listed name with a macro before
including it, and compile such programs with `foresight cc`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "runtime" / "include" / "foresight.h"
FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
KEYWORDS = set("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static struct
switch typedef union unsigned void volatile while _Bool _Complex _Imaginary _Alignas _Alignof
_Atomic _Generic _Noreturn _Static_assert _Thread_local define ifdef ifndef endif undef elif
defined error nullptr""".split())
# What the header takes from <stdint.h>, <stddef.h>, <stdarg.h> and <stdio.h> as they
# define it (undefined, SIZE_MAX or va_start would be gone).
FROM_LIBC = set("""uint64_t uint32_t uint16_t uint8_t int64_t int32_t uintptr_t intptr_t size_t
ssize_t off_t uintmax_t intmax_t FILE va_list SIZE_MAX UINTPTR_MAX NULL offsetof va_start va_end
va_arg stdin""".split())


def names_in(text: str) -> set[str]:
    """Identifiers of the header's code a program could define as macros: not keywords,
    not reserved (__x, _X), not foresight's own prefix, not the C library's macros."""
    t = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    t = re.sub(r"//[^\n]*", "", t)
    t = re.sub(r'"(\\.|[^"\\])*"', '""', t)
    t = re.sub(r"'(\\.|[^'\\])*'", "''", t)
    t = "\n".join(line for line in t.split("\n")
                  if not re.match(r"\s*#\s*(include|pragma)", line))
    ids = set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", t))
    return {i for i in ids if i not in KEYWORDS and i not in FROM_LIBC
            and not i.startswith("__") and not re.match(r"_[A-Z]", i)
            and not i.lower().startswith("foresight")}


def test_every_name_of_the_header_is_saved_undefined_and_restored():
    text = HEADER.read_text()
    pushed = re.findall(r'#pragma push_macro\("(\w+)"\)', text)
    undefined = re.findall(r"^#undef (\w+)$", text, flags=re.M)
    popped = re.findall(r'#pragma pop_macro\("(\w+)"\)', text)
    assert sorted(pushed) == sorted(names_in(text)), \
        set(pushed) ^ names_in(text)   # a name added to the header: add it to the lists
    assert set(undefined) >= set(pushed) and sorted(popped) == sorted(pushed)


def test_the_header_compiles_with_each_of_its_names_a_macro(tmp_path, cc):
    names = sorted(names_in(HEADER.read_text()))
    src = ["#include <stdarg.h>", "#include <stddef.h>", "#include <stdint.h>",
           "#include <stdio.h>"]
    src += [f"#define {n} )broken(" for n in names]
    src += ['#include "foresight.h"', "static double zz_a[1 << 16];",
            "double zz_sum(long zz_n);",
            "double zz_sum(long zz_n) { double zz_s = 0; FORESIGHT_SITE(zz_site, \"a[i]\");",
            "  foresight_prefetch_at(&zz_site, zz_a, sizeof zz_a);",
            "  for (long zz_i = 0; zz_i < zz_n; zz_i++)", "    zz_s += zz_a[zz_i];",
            "  return zz_s;", "}"]
    (tmp_path / "h.c").write_text("\n".join(src) + "\n")
    p = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{HEADER.parent}",
                        "-c", "h.c", "-o", "h.o"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr[-3000:]


PROGRAMS = {
    "line_macro.c": ("", """#include <stdio.h>
#include <stdlib.h>
#define line lines_read
int main(void) {
  long n = 1000000, lines_read = 7;
  double *a = calloc(n, sizeof *a), s = 0;
  for (long i = 0; i < n; i++) a[i] = (double)(i % 13);
  for (long i = 0; i < n; i++) s += a[i];
  printf("%g %ld\\n", s, line);
  return 0;
}
"""),
    "feature_then_header.c": ("", """#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include "names.h"
int main(void) {
  long n = 1000000;
  unused int u = 0;
  double *a = calloc(n, sizeof *a), s = 0;
  for (long i = 0; i < n; i++) a[i] = (double)(i % 13);
  for (long i = 0; i < n; i++) s += a[i] * block + omp_get_max_threads();
  printf("%g\\n", s);
  return 0;
}
"""),
    "defined_on_the_command_line.c": ("-Dsite=3 -Dstep=+ -Dpage=4096", """#include <stdio.h>
#include <stdlib.h>
int main(void) {
  long n = 1000000;
  double *a = calloc(n, sizeof *a), s = 0;
  for (long i = 0; i < n; i++) a[i] = (double)(i % 13);
  for (long i = 0; i < n; i++) s += a[i] * site;
  printf("%g %d\\n", s, page);
  return 0;
}
"""),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_defining_the_headers_names_keep_their_hints(tmp_path, cc, name):
    flags, text = PROGRAMS[name]
    (tmp_path / "names.h").write_text("#define unused __attribute__((unused))\n"
                                      "#define block 2\n"
                                      "#define omp_get_max_threads() 1\n")
    (tmp_path / name).write_text(text)
    subprocess.run([cc, "-O2", *flags.split(), name, "-o", "O"], cwd=tmp_path, check=True)
    p = subprocess.run([FORESIGHT, "cc", "-O2", *flags.split(), name, "-o", "P"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0 and "did not compile" not in p.stderr, p.stderr
    run = {"cwd": tmp_path, "capture_output": True, "text": True}
    want = subprocess.run(["./O"], **run).stdout
    assert subprocess.run(["./P"], env={**os.environ, "FORESIGHT_INCORE": "hint"},
                          **run).stdout == want
