"""The paper's own examples: the compiler's decisions under the "paper" preset.

Checked are reuse, locality, predicates, leading/trailing references, the pipelining
loop and the prefetch distance (Eq. (1)), not the printed code (whose text has typos).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from foresight.compiler.options import CompileOptions
from foresight.compiler.pipeline import transform


def nests(tmp_path: Path, code: str, **opts) -> list[dict]:
    src = tmp_path / "fig.c"
    src.write_text(code)
    return transform(src, [], CompileOptions(preset="paper", **opts)).report


def refs(nest: dict) -> dict[str, dict]:
    return {r["ref"]: r for r in nest["references"]}


def hints(nest: dict) -> dict[str, dict]:
    return {h["ref"]: h for h in nest["hints"]}


FIG2 = """
double A[3][{n}]; double B[{n1}][2];
void f(void) {{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < {n}; j++)
      A[i][j] = B[j][0] + B[j+1][0];
}}
"""
# Figures 2-4: pages of two elements (16 bytes), 500 pages of memory.
SMALL = {"page_size": 16, "memory_bytes": 500 * 16}


def test_figure_2_reuse(tmp_path):
    (nest,) = nests(tmp_path, FIG2.format(n=8, n1=9), **SMALL)
    r = refs(nest)
    assert r["A[i][j]"]["reuse"] == {"i": "none", "j": "spatial"}
    assert r["B[j+1][0]"]["reuse"] == {"i": "temporal", "j": "none"}
    assert r["B[j+1][0]"]["leading"] and not r["B[j+1][0]"]["trailing"]
    assert not r["B[j][0]"]["leading"] and r["B[j][0]"]["trailing"]


def test_figure_3_localized_iteration_space(tmp_path):
    (small,) = nests(tmp_path, FIG2.format(n=8, n1=9), **SMALL)
    assert {lp["var"]: lp["localized"] for lp in small["loops"]} == {"i": True, "j": True}
    (large,) = nests(tmp_path, FIG2.format(n=10000, n1=10001), **SMALL)
    assert {lp["var"]: lp["localized"] for lp in large["loops"]} == {"i": False, "j": True}
    # 5,000 pages for A, 10,000 for B[j+1][0], one for B[j][0] per i iteration.
    i_loop = next(lp for lp in large["loops"] if lp["var"] == "i")
    assert i_loop["bytes_per_iteration"] == 15001 * 16


def test_figure_4_predicates(tmp_path):
    (nest,) = nests(tmp_path, FIG2.format(n=100, n1=101), **SMALL)
    r = refs(nest)
    assert r["A[i][j]"]["predicate"] == "j mod 2 == 0"
    assert r["B[j+1][0]"]["predicate"] == "i == first"
    assert r["B[j][0]"]["predicate"] == "False"
    # Only the leading reference is prefetched; B is reused across i, so never released.
    h = hints(nest)
    assert set(h) == {"A[i][j]", "B[j+1][0]"}
    assert h["B[j+1][0]"]["release"] is None


def test_figure_7_pipelined_zeroing(tmp_path):
    (nest,) = nests(tmp_path, "double A[100000];\nvoid z(void) {\n"
                    "  for (int i = 0; i < 100000; i++)\n    A[i] = 0;\n}\n")
    h = hints(nest)["A[i]"]
    assert h["pipelining_loop"] == "i" and h["block_bytes"] == 4 * 4096
    # 2,048 iterations per 4-page block; Eq. (1) gives 6 blocks: 12,288 iterations ahead.
    assert h["distance"] == 12288
    assert h["release"] == "A[i]"
    assert refs(nest)["A[i]"]["predicate"] == "i mod 512 == 0"


FIG8 = """
int A[64][64][32][5][5];
void z(void) {
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++)
      for (int k = 0; k < 32; k++)
        for (int l = 0; l < 5; l++)
          for (int m = 0; m < 5; m++)
            A[i][j][k][l][m] = 0;
}
"""


def test_figure_8_small_inner_bounds(tmp_path):
    (nest,) = nests(tmp_path, FIG8)
    h = hints(nest)["A[i][j][k][l][m]"]
    # m, l and k touch less than a block in all: pipelined across j (Figure 8(c)).
    assert h["pipelining_loop"] == "j"
    # Five j iterations per block; Eq. (1): 3 blocks (the 12-page prolog), 15 iterations.
    assert h["distance"] == 15
    assert any("3 block(s)" in d for d in nest["decisions"])


FIG9 = """
int a[1000000]; int b[1000000]; int c[1000000][8];
void f(void) {
  for (int i = 0; i < 1000000; i++)
    for (int j = 0; j < 8; j++)
      a[b[i]] = a[b[i]] + c[i][j];
}
"""


def test_figure_9_indirect_two_strip_levels(tmp_path):
    (nest,) = nests(tmp_path, FIG9)
    h = hints(nest)
    assert h["a[b[i]]"]["pipelining_loop"] == "i"
    assert refs(nest)["a[b[i]]"]["predicate"] == "True"
    # b[i] feeds the indirect prefetch: twice as far ahead.
    assert h["b[i]"]["feeds_indirect"] and h["b[i]"]["pipelining_loop"] == "i"
    assert h["b[i]"]["distance"] == 2 * h["a[b[i]]"]["distance"] > 0
    # c[i][j]: the j loop touches 32 bytes, less than a block: pipelined across i.
    assert h["c[i][j]"]["pipelining_loop"] == "i"
    assert h["c[i][j]"]["stride_bytes"] == "32" and h["b[i]"]["stride_bytes"] == "4"


def test_figure_22_no_exploitable_group_reuse(tmp_path):
    code = """
double C[512][512]; double D[1024][512];
void foo(double *x, double *y); void bar(double x, double y);
void f(int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      foo(C[i], C[j]);
      bar(D[2*i][j], D[2*i+1][j]);
    }
}
"""
    (nest,) = nests(tmp_path, code)
    r = refs(nest)
    # D[2i][j] and D[2i+1][j] are uniformly generated but never share data: both lead.
    assert r["D[2*i][j]"]["leading"] and r["D[2*i+1][j]"]["leading"]
    assert r["D[2*i][j]"]["group"] == [] and r["D[2*i+1][j]"]["group"] == []


@pytest.mark.parametrize("stencil", ["A[i-1][j] + A[i][j] + A[i+1][j]"])
def test_group_reuse_in_variably_modified_array(tmp_path, stencil):
    code = f"""
void f(int n, int m, double (*A)[m], double *out) {{
  for (int i = 1; i < n - 1; i++)
    for (int j = 0; j < m; j++)
      out[j] += {stencil};
}}
"""
    (nest,) = nests(tmp_path, code)
    r = refs(nest)
    assert r["A[i+1][j]"]["leading"] and r["A[i-1][j]"]["trailing"]
    assert hints(nest)["A[i+1][j]"]["release"] == "A[i-1][j]"


def test_group_reuse_in_a_column_walk(tmp_path):
    # No loop moves the last subscript: u[k][j][0] and u[k][j][1] touch the same half page
    # on every iteration (MG's ghost-face exchange), so one leads and the other trails;
    # u[k][j][n] is a symbolic distance away and stays on its own.
    code = """
void f(long n, long m, double u[][m][n + 2]) {
  for (long k = 1; k <= m; k++)
    for (long j = 1; j <= m; j++) {
      u[k][j][0] = u[k][j][n];
      u[k][j][1] = 0.0;
    }
}
"""
    (nest,) = nests(tmp_path, code)
    r = refs(nest)
    assert r["u[k][j][0]"]["group"] == ["u[k][j][1]"]
    assert r["u[k][j][1]"]["leading"] and r["u[k][j][0]"]["trailing"]
    assert r["u[k][j][n]"]["group"] == [] and r["u[k][j][n]"]["leading"]
