"""Macros that make I/O calls, expanded for the prefetch thread (frontend/macro_io.py,
passes/prefetch_thread.py): where the file as written is refused for a macro, the pass
slices the file with those invocations expanded, and the compiled text carries the
expansions."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from foresight.compiler.frontend.macro_io import expand_io_macros
from foresight.compiler.options import CompileOptions
from foresight.compiler.pipeline import transform

HEAD = """\
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#define REC 512
"""

MAIN = """\
int main(int argc, char **argv)
{
    char b[REC];
    long n = 0, pos = 4096;
    int fd = open(argc > 1 ? argv[1] : "x.dat", O_RDONLY);
    if (fd < 0)
        return 1;
    for (long k = 9; k >= 0; k--) {
        USE;
    }
done:
    printf("%ld %ld %d\\n", n, pos, b[0]);
    return 0;
}
"""

NAMES = frozenset({"pread", "read", "fread"})


def thread_of(tmp_path: Path, text: str):
    src = tmp_path / "m.c"
    src.write_text(text)
    out = transform(src, [], CompileOptions(prefetch_thread=True))
    said = [e["message"] for e in out.report if e.get("pass") == "prefetch-thread"]
    return out, said


@pytest.mark.parametrize("define, use", [
    # the call in the macro's own text
    ("#define READ_AT(i) pread(fd, b, REC, (off_t)(i) * REC)",
     "if (READ_AT(k) != REC) goto done"),
    # an object-like macro
    ("#define NEXT read(fd, b, REC)", "if (lseek(fd, k * REC, SEEK_SET) < 0 || NEXT < 0) "
     "goto done"),
    # a macro that does more with its argument than check it (refused unexpanded)
    ("#define SLURP(c, n) while ((c) == REC) n++", "SLURP(pread(fd, b, REC, k * REC), n)"),
    ("#define TAKE(x) do { if ((x) <= 0) goto done; } while (0)",
     "TAKE(pread(fd, b, REC, k * REC))"),
    # one macro through another, and a variadic one
    ("#define RD(f, i) pread(f, b, REC, (i) * REC)\n#define RD2(i) RD(fd, i)",
     "if (RD2(k) < 0) goto done"),
    ("#define CALL(...) pread(__VA_ARGS__)", "if (CALL(fd, b, REC, k * REC) < 0) goto done"),
    # a macro around one that reads: the second round's expansion holds the first's
    ("#define RD(i) pread(fd, b, REC, (i) * REC)\n#define CLAMP0(x) ((x) < 0 ? 0 : (x))",
     "n += CLAMP0(RD(k))"),
])
def test_io_in_macros_gets_a_thread(tmp_path, define, use):
    out, said = thread_of(tmp_path, HEAD + define + "\n" + MAIN.replace("USE", use))
    assert any("invocation(s) of macros that make I/O calls expanded" in m for m in said), said
    assert not any("left out" in m for m in said), said
    assert out.changed and "foresight_pt_start" in out.text
    assert "pread (" in out.text or "read (" in out.text   # the expansion's spelling


@pytest.mark.parametrize("define, use", [
    # stringizing: its text is its argument's spelling
    ("#define ECHO(x) (puts(#x), (x))", "(void)ECHO(pread(fd, b, REC, k))"),
    # pasting
    ("#define P(op) op##ad(fd, b, REC, k)", "(void)P(pre)"),
])
def test_macros_that_stringize_or_paste_stay_refused(tmp_path, define, use):
    _, said = thread_of(tmp_path, HEAD + define + "\n" + MAIN.replace("USE", use))
    assert any(m.startswith("no prefetch thread") for m in said), said


def test_a_file_read_as_written_is_not_expanded(tmp_path):
    # CHECK(pread(...)) is followed as written: nothing expanded.
    define = "#define CHECK(x) do { if ((x) != REC) exit(1); } while (0)"
    out, said = thread_of(tmp_path, HEAD + define + "\n" +
                          MAIN.replace("USE", "CHECK(pread(fd, b, REC, k * REC))"))
    assert not any("expanded" in m for m in said) and "CHECK(pread(" in out.text


def test_the_expansion_keeps_lines_and_tokens(tmp_path):
    # Over two lines, with a comment in an argument: one line, the next line kept empty;
    # __LINE__ in the macro must stay the invocation's (cc -E agrees, or nothing is done).
    src = tmp_path / "m.c"
    text = HEAD + ("#define READ_AT(i) pread(fd, b, REC, (off_t)(i) * REC)\n"
                   "#define WHERE(i) (pread(fd, b, REC, (i)) + __LINE__)\n") + MAIN.replace(
        "USE", "if (READ_AT(k /* the record */\n            ) < 0 || WHERE(k) < 0) goto done")
    src.write_text(text)
    got = expand_io_macros(src, [], text.encode(), NAMES)
    assert got is not None
    expanded, expansions = got
    assert expanded.count(b"\n") == text.count("\n") and len(expansions) == 2
    assert b"pread ( fd , b , REC , ( off_t ) ( k ) * REC )" in expanded
    assert b"/* the record */" not in expanded
    # the same program, as cc sees it
    for t, name in ((text.encode(), "a"), (expanded, "b")):
        (tmp_path / f"{name}.c").write_bytes(t)
    pre = [re.sub(rb"\s+", b"", subprocess.run(["cc", "-E", "-P", str(tmp_path / f"{n}.c")],
                                               capture_output=True, check=True).stdout)
           for n in "ab"]
    assert pre[0] == pre[1]


def test_nothing_to_expand_is_none(tmp_path):
    src = tmp_path / "m.c"
    text = HEAD + "#define ECHO(x) #x\n" + MAIN.replace("USE", "(void)pread(fd, b, REC, k)")
    src.write_text(text)
    assert expand_io_macros(src, [], text.encode(), NAMES) is None


def test_another_pass_inside_an_expanded_invocation_leaves_the_thread_out(tmp_path):
    # Hint code of another pass that falls inside an invocation the thread's pass expands
    # wins: the thread's changes are dropped and the report says so.
    from foresight.compiler.passes import PASSES
    from foresight.compiler.passes.api import PassResult
    from foresight.compiler.rewrite.splice import Insertion

    text = HEAD + "#define READ_AT(i) pread(fd, b, REC, (off_t)(i) * REC)\n" + MAIN.replace(
        "USE", "if (READ_AT(k) != REC) goto done")
    src = tmp_path / "m.c"
    src.write_text(text)
    inside = text.index("READ_AT(k)") + len("READ_AT(")

    def poke(unit, opts):
        return PassResult(insertions=[Insertion(inside, 1, 0, "/* poke */ ")])

    out = transform(src, [], CompileOptions(prefetch_thread=True),
                    passes={**PASSES, "poke": poke})
    assert "READ_AT(/* poke */ k)" in out.text and "foresight_pt_start" not in out.text
    assert any("its changes were left out" in e["message"] for e in out.report
               if e.get("pass") == "prefetch-thread")


def test_an_expansion_never_pastes_onto_what_is_before_it(tmp_path):
    # `s += -NEGROW(fd, b)` with NEGROW's text starting with `-`: pasted on, `--rows[...]`
    # (a decrement: a reviewer's finding, the program's answer changed); the expansion has a
    # space each side, and the preprocessor check tells `- -` from `--`.
    text = """\
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int rows[256];
#define NEGROW(f, b) -rows[read((f), (b), 1)]
int main(int argc, char **argv)
{
    char buf[16];
    int fd = open(argv[1], O_RDONLY);
    long s = 0;
    for (int i = 0; i < 4; i++)
        s += -NEGROW(fd, buf);
    printf("%ld\\n", s);
    return 0;
}
"""
    src = tmp_path / "m.c"
    src.write_text(text)
    got = expand_io_macros(src, [], text.encode(), NAMES)
    assert got is not None and b"s += - - rows [" in got[0]
    data = tmp_path / "in.bin"
    data.write_bytes(bytes(range(16)))
    outs = []
    foresight = str(Path(sys.prefix) / "bin" / "foresight")
    for cmd in (["cc"], [foresight, "cc", "--prefetch-thread"]):
        exe = tmp_path / f"p{len(outs)}"
        subprocess.run([*cmd, "-O2", str(src), "-o", str(exe)], check=True,
                       capture_output=True)
        outs.append(subprocess.run([str(exe), str(data)], capture_output=True,
                                   check=True).stdout)
    assert outs[0] == outs[1] == b"0\n"
