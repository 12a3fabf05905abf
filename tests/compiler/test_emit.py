"""The rewrite's emitters on hand-built loops and plans (no front end, no analysis): the
C they write is spliced into a small file and compiled against foresight.h, and says
what the plan says."""

from __future__ import annotations

import re
import subprocess

import pytest

from foresight import paths
from foresight.compiler.analysis.locality import NestFacts
from foresight.compiler.ir import Affine, ArrayRef, Loop, LoopNest, sym_atom, sym_const
from foresight.compiler.options import CompileOptions
from foresight.compiler.passes.api import Unit
from foresight.compiler.rewrite import emit_stream
from foresight.compiler.rewrite.emit import NestEmitter
from foresight.compiler.rewrite.nest import NestCode
from foresight.compiler.rewrite.splice import translation_unit
from foresight.compiler.schedule.plan import Hint, NestPlan


def _loop(src: str, head: str, var: str, upper: str, step: int = 1, depth: int = 0,
          children: tuple[Loop, ...] = (), **kw) -> Loop:
    """The loop of `src` starting `head` (a braced body), stepping `step` to `upper`."""
    start = src.index(head)
    body = src.index("{", start)
    end, level = body, 0
    for end in range(body, len(src)):
        level += {"{": 1, "}": -1}.get(src[end], 0)
        if level == 0:
            break
    return Loop(var, "0", upper, "<", step, src.count("\n", 0, start) + 1, depth, start,
                end + 1, body, end + 1, True, children=children, **kw)


def _plan(root: Loop, hints: list[Hint]) -> NestPlan:
    return NestPlan(NestFacts(LoopNest("f", root, "t.c"), [], {}, {}), hints)


def _compile(cc, tmp_path, src: str, plan: NestPlan, opts: CompileOptions) -> str:
    """The file with the plan's hints, which must compile cleanly; its text."""
    include = paths.include_dir()
    if not (include / "foresight.h").exists():
        pytest.skip("foresight.h not installed: run `make setup`")
    unit = Unit("t.c", src.encode(), (plan.facts.nest,))
    text = translation_unit("t.c", src.encode(), NestEmitter(plan, 0, opts, unit).insertions(),
                            None)
    (tmp_path / "t.c").write_text(text)
    p = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{include}",
                        "-fsyntax-only", str(tmp_path / "t.c")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr + text
    # The header and #line, then the unhinted copy of the nest between two #line
    # directives on lines of their own: the user's lines keep their numbers.
    root = plan.facts.nest.root
    copy = 4 + src[root.start:root.end].count("\n") if opts.preset != "paper" else 0
    assert text.count("\n") == src.count("\n") + 2 + copy
    return text


def _declared_once(text: str) -> None:
    """Every generated name at nest scope is declared once and used."""
    names = set(re.findall(r"__fs_[a-z]+_0\w*", text))
    assert names
    for name in names:
        declared = re.findall(rf"(?:int|long|uintptr_t|_t \*|nest|stream|pipe) {name}\b"
                              rf"|\*{name}\b|FORESIGHT_SITE\({name}\b", text)
        assert len(declared) == 1, (name, declared)


SUM = """\
double sum(const double *a, long n) {
  double s = 0;
  for (long i = 0; i < n; i++) {
    s += a[i];
  }
  return s;
}
"""


def test_a_stream(cc, tmp_path):
    lp = _loop(SUM, "for", "i", "n", bound_runtime=True)
    a = ArrayRef("a[i]", 3, "a", (Affine({"i": sym_const(1)}),), (sym_const(8),), 8,
                 False, False)
    plan = _plan(lp, [Hint(a, lp, [], a)])
    text = _compile(cc, tmp_path, SUM, plan, CompileOptions())
    _declared_once(text)
    # One stream of loop 0 with lead ds, stepping 8 bytes; released behind itself; the
    # step is told the iterations left in the run (the bound is evaluated again).
    assert "__fs_ns_0[] = {{0, 0, FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_RELEASE}}" in text
    address = "((uintptr_t)(a) + (((uintptr_t)8)) * ((uintptr_t)(i)))"
    assert f"__fs_at[] = {{{address}, {address}}}" in text
    assert "__fs_at, (((uintmax_t)(n) - (uintmax_t)(i)) - 1)); } }\n" in text


WALK = """\
long count(const int *a, const int *e) {
  long s = 0;
  for (const int *p = a; p < e; p++) {
    s += *p;
  }
  return s;
}
"""


def test_a_pointer_walk_is_a_stream_over_the_address(cc, tmp_path):
    # The front end gives `*p` base 0 and p (an address, stepping 4 bytes) as a
    # subscript of one byte per unit.
    lp = _loop(WALK, "for", "p", "e", step=4, bound_runtime=True, walk=True)
    ref = ArrayRef("*p", 3, "0", (Affine({"p": sym_const(1)}),), (sym_const(1),), 4,
                   False, False)
    plan = _plan(lp, [Hint(ref, lp, [], None)])
    nest = NestCode(plan, 0, CompileOptions())
    spec, values = emit_stream.setup(nest, plan.hints[0], 0, 0)
    assert spec == "{0, 0, FORESIGHT_STREAM_RUNS}"
    assert values[0] == "(((uintptr_t)1)) * (uintptr_t)(4)"      # 4 bytes per iteration
    step = emit_stream.step(nest, lp, plan.hints, 0)
    assert "((uintptr_t)(0) + (((uintptr_t)1)) * ((uintptr_t)(p)))" in step
    assert "/ (uintmax_t)4)" in step                               # iterations, not bytes
    _compile(cc, tmp_path, WALK, plan, CompileOptions())


GATHER = """\
void gather(double *out, const double *a, const int *b, long n, long m) {
  for (long k = 0; k < m; k++) {
    for (long i = 0; i < n; i++) {
      out[i] += a[b[i]];
    }
  }
}
"""


@pytest.mark.parametrize("preset", ["adaptive", "paper"])
def test_an_indirect_reference_with_its_index_stream(cc, tmp_path, preset):
    n = {"upper_aff": Affine({}, sym_atom("n")), "bounds_invariant": True,
         "bound_runtime": True}
    inner = _loop(GATHER, "for (long i", "i", "n", depth=1, **n)
    outer = _loop(GATHER, "for (long k", "k", "m", children=(inner,))
    b = ArrayRef("b[i]", 4, "b", (Affine({"i": sym_const(1)}),), (sym_const(4),), 4,
                 False, False)
    a = ArrayRef("a[b[i]]", 4, "a", (), (sym_const(8),), 8, False, False, indirect=b)
    plan = _plan(outer, [Hint(b, inner, [], b, feeds_indirect=True),
                         Hint(a, inner, [], None, indirect_index=b)])
    if preset == "paper":
        plan.paper_distance["i"] = 100
    text = _compile(cc, tmp_path, GATHER, plan, CompileOptions(preset=preset))
    _declared_once(text)
    # The index stream runs ds + di ahead (lead 1); the loop has one indirect reference
    # and the paper's distance or 0; the look-ahead reads b at i + di, within the loop.
    assert "__fs_ns_0[] = {{0, 1, " in text
    assert f"__fs_np_0[] = {{{{1, {100 if preset == 'paper' else 0}}}}}" in text
    assert "(uintmax_t)__fs_d_0[1] ? (uintmax_t)(i) + (uintmax_t)__fs_d_0[1] : " \
           "(uintmax_t)((((uintptr_t)(n)))) - 1;" in text
    assert "foresight_prefetch_at(&__fs_site_0_1, (const void *)" \
           "((uintptr_t)(a) + (uintptr_t)__fs_x * (((uintptr_t)8))), 8);" in text
    # The prolog runs again on each entry of the inner loop, and the countdown restarts.
    assert "{ __fs_pc_0_i3 = 0; __fs_started_0_1 = 0; for (long i" in text


TWO = """\
void two(double *x, double *y, long n, long m) {
  for (long k = 0; k < m; k++) {
    for (long i = 0; i < n; i++) { x[i] += 1; } for (long i = 0; i < n; i++) { y[i] += 2; }
  }
}
"""


def test_two_loops_over_i_on_one_line_get_their_own_countdowns(cc, tmp_path):
    first = _loop(TWO, "for (long i", "i", "n", depth=1, bound_runtime=True)
    second = _loop(TWO[:first.end].replace("for (long i", "XXXXXXXXXXX") + TWO[first.end:],
                   "for (long i", "i", "n", depth=1, bound_runtime=True)
    outer = _loop(TWO, "for (long k", "k", "m", children=(first, second))
    x, y = (ArrayRef(f"{v}[i]", 3, v, (Affine({"i": sym_const(1)}),), (sym_const(8),), 8,
                     True, False) for v in "xy")
    text = _compile(cc, tmp_path, TWO, _plan(outer, [Hint(x, first, [], x),
                                                     Hint(y, second, [], y)]),
                    CompileOptions())
    _declared_once(text)
    assert "uintptr_t __fs_pc_0_i3 = 0; uintptr_t __fs_pc_0_i3_1 = 0;" in text
