"""rewrite/cexpr.py (the C-expression builder), rewrite/bounds.py (loop bounds as C) and
rewrite/names.py (one name table per nest), on their own: the shapes they write, and
that the C they write computes what the Python says (compiled and run)."""

from __future__ import annotations

import subprocess

import pytest

from foresight.compiler.ir import Affine, ArrayRef, Loop, sym_atom, sym_const
from foresight.compiler.rewrite import bounds, cexpr
from foresight.compiler.rewrite.names import LOCALS, Names


def _loop(var: str = "i", line: int = 1, **kw) -> Loop:
    args = dict(lower="0", upper="n", cond_op="<", step=1, line=line, depth=0, start=0, end=1,
                body_start=0, body_end=1, body_compound=True)
    args.update(kw)
    return Loop(var, **args)


def test_casts_literals_and_arithmetic():
    assert cexpr.cast("uintptr_t", "a + 1") == "(uintptr_t)(a + 1)"
    assert cexpr.cast_atom("uintmax_t", "n") == "(uintmax_t)n"
    assert cexpr.literal(4096) == "(uintptr_t)4096"
    assert cexpr.literal(2**63) == "(uintptr_t)9223372036854775808u"   # needs unsigned
    assert cexpr.wsum("a", "b", "c") == "(a + b + c)"
    assert cexpr.cond(cexpr.cmp("x", "<", "y"), "x", "y") == "(x < y ? x : y)"
    assert cexpr.minimum("x", "y") == "(x < y ? x : y)"
    assert cexpr.bit_or() == "0" and cexpr.bit_or("A", "B") == "A | B"
    assert cexpr.call("f", "a", cexpr.addr_of("s")) == "f(a, &s)"
    assert cexpr.load("b[i]", "(p)") == "*(__typeof__(b[i]) *)(p)"
    assert cexpr.align_up("f", 4096) == "(f + (uintptr_t)4096 - 1) & ~((uintptr_t)4096 - 1)"
    assert cexpr.string('say "hi"\n\\') == '"say \\"hi\\" \\\\"'


def test_statements():
    assert cexpr.decl("int", ("a", "0"), "b") == "int a = 0, b;"
    assert cexpr.decl("struct s *", ("p", "0")) == "struct s *p = 0;"   # `*` by the name
    assert cexpr.block("a;", "b;") == "{ a; b; }"
    assert cexpr.if_chain([("a", "x;"), ("b", "y;")], "{ z; }") == \
        "if (a) x; else if (b) y; else { z; }"
    assert cexpr.for_("t = 0", "t < n", "t++", "{ }") == "for (t = 0; t < n; t++) { }"


def test_address_of_a_reference():
    # a[i][j] of double a[..][n]: a + 8n·i + 8·j + 8.
    ref = ArrayRef("a[i][j+1]", 1, "a", (Affine({"i": sym_const(1)}),
                                         Affine({"j": sym_const(1)}, sym_const(1))),
                   (sym_atom("n"), sym_const(8)), 8, False, False)
    assert cexpr.address(ref, {}) == ("((uintptr_t)(a) + (((uintptr_t)(n))) * ((uintptr_t)(i)) "
                                      "+ (((uintptr_t)8)) * ((uintptr_t)(j)) + (((uintptr_t)8)))")
    # A loop variable replaced (a loop at its lower bound), another base (a row read).
    moved = cexpr.address(ref, {"j": "0"}, base="r")
    assert moved.startswith("((uintptr_t)(r) + ") and "* (0)" in moved


def test_constants_fold():
    assert cexpr.abs_sym(sym_const(-3), 4) == "(uintptr_t)12"
    s = cexpr.sym(sym_atom("s"))
    assert cexpr.abs_sym(sym_atom("s")) == \
        f"(({s}) > UINTPTR_MAX / 2 ? (uintptr_t)0 - ({s}) : ({s}))"
    assert cexpr.wrapped_abs(-5) == 5 and cexpr.wrapped_abs(2**64 - 5) == 5
    assert cexpr.signed(None) == "(intmax_t)0"
    assert cexpr.signed(sym_const(-2**63)) == "((intmax_t)-9223372036854775807 - 1)"


def test_window_of_a_loop_counting_down():
    w = bounds.Window(_loop(cond_op=">", step=-1), "(lo)", LOCALS.left)
    assert w.declare() == "const uintmax_t __fs_left = (uintmax_t)(i) - (uintmax_t)(lo);"
    assert w.fits("d") == "__fs_left > d" and w.at("d") == "(uintmax_t)(i) - d"
    assert w.last == "(uintmax_t)(lo) + 1"


def test_the_c_computes_what_python_counts(cc, tmp_path):
    """bounds.iterations, cexpr.abs_sym and cexpr.signed on symbolic bounds and strides,
    compiled and run, against the iterations Python counts."""
    cases = []   # (C expression, expected value, C declarations of its variables)
    for lo, hi, op, step in [(0, 10, "<", 1), (0, 10, "<=", 3), (10, 0, ">", -1),
                             (10, -4, ">=", -2), (5, 5, "<", 1), (7, 2, "<", 1),
                             (-3, 4, "<", 2)]:
        lp = _loop(lower_sym=sym_atom("lo"), upper_sym=sym_atom("hi"), cond_op=op, step=step)
        runs, v = 0, lo
        while {"<": v < hi, "<=": v <= hi, ">": v > hi, ">=": v >= hi}[op]:
            runs, v = runs + 1, v + step
        cases.append((bounds.iterations(lp), max(runs - 1, 0), f"long lo = {lo}, hi = {hi};"))
    for s, k in [(-24, 1), (24, -3), (8, 5)]:
        cases.append((cexpr.abs_sym(sym_atom("s"), k), abs(s * k), f"long s = {s};"))
    cases.append((f"(uintptr_t){cexpr.signed(sym_atom('s'))} + 10", 3, "long s = -7;"))
    body = "\n".join(f'  {{ {decls} printf("%ju\\n", (uintmax_t)({expr})); }}'
                     for expr, _, decls in cases)
    (tmp_path / "t.c").write_text("#include <stdint.h>\n#include <stdio.h>\n"
                                  f"int main(void) {{\n{body}\n  return 0;\n}}\n")
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-o", tmp_path / "t", tmp_path / "t.c"],
                   check=True)
    out = subprocess.run([tmp_path / "t"], capture_output=True, text=True, check=True).stdout
    assert [int(v) for v in out.split()] == [want for _, want, _ in cases]


def test_names_are_the_nests_and_allocated_once():
    names = Names(3)
    assert names.active == "__fs_on_3" and names.distances == "__fs_d_3"
    assert names.hint(2) is names.hint(2)
    assert names.hint(2).site == "__fs_site_3_2" and names.hint(2).random == "__fs_rs_3_2"
    lp = _loop("i", 7)
    assert names.countdown(lp) == names.countdown(lp) == "__fs_pc_3_i7"
    # Values at nest entry: numbered per kind, a second name as a suffix of the first.
    assert names.fresh("fp", 2) == ("__fs_fp_3_0", "__fs_fp_3_0_1")
    assert names.fresh("fp") == ("__fs_fp_3_1",)
    assert names.fresh("vol") == ("__fs_vol_3_0",)


@pytest.mark.parametrize("other", [("i", 17), ("i1", 7)])
def test_two_loops_spelled_alike_get_two_countdowns(other):
    # Two pipelining loops over i on line 17 (`for (i...) x[i]; for (i...) y[i];`), or
    # one over i on line 17 and one over i1 on line 7: the usual spellings are the same.
    names = Names(0)
    assert names.countdown(_loop("i", 17)) == "__fs_pc_0_i17"
    assert names.countdown(_loop(*other)) == "__fs_pc_0_i17_1"
