"""A deterministic C file of many two-deep loop nests, for `foresight bench compile`.

Each function holds up to seven nests over `double *a, *b` and `int *ix`, each one of
four kinds drawn from a seeded generator: row-major reads (`a[i * m + j] * b[j]`),
column-order updates, an indirect gather (`a[ix[i * m + j]]`) and a four-neighbour
sum.  They are the shapes foresight cc hints, so the file measures what generated code
costs the C compiler.  The same (lines, seed) always gives the same text, and a
smaller file is the beginning of a larger one's nests.

    python -m foresight.bench.gen_nests --lines 1000 [--seed 1] > nests.c
"""

from __future__ import annotations

import argparse
import random
import sys

NESTS_PER_FUNCTION = 7
_HEADER = ["#include <stdio.h>", "#include <stdlib.h>", ""]
_MAIN = "int main(void) { return 0; }"
_KINDS = ("rows", "cols", "ind", "lin")
MIN_LINES = 10   # the header, main and one function of one nest


def _nest(kind: str, k: int) -> list[str]:
    if kind == "rows":
        return ["  for (int i = 0; i < n; i++)", "    for (int j = 0; j < m; j++)",
                "      s += a[i * m + j] * b[j];"]
    if kind == "cols":
        return ["  for (int j = 0; j < m; j++)", "    for (int i = 0; i < n; i++)",
                f"      a[i * m + j] += b[i] * {k};"]
    if kind == "ind":
        return ["  for (int i = 0; i < n; i++)", "    for (int j = 0; j < m; j++)",
                "      s += a[ix[i * m + j]];"]
    return ["  for (int i = 1; i < n - 1; i++)", "    for (int j = 1; j < m - 1; j++)",
            "      b[i] += a[(i - 1) * m + j] + a[(i + 1) * m + j] - a[i * m + j - 1];"]


def generate(lines: int, seed: int = 1) -> tuple[str, int]:
    """C text of at least LINES lines (fewer than LINES + 8: a function's frame and one
    nest) and how many nests it holds.  With seed 1 and 1,044 lines: 280 nests in 40
    functions."""
    if lines < MIN_LINES:
        raise ValueError(f"at least {MIN_LINES} lines, not {lines}")
    rng = random.Random(seed)
    out = list(_HEADER)
    nests = 0
    f = 0
    # A function of k nests is 3k + 5 lines: signature, `s`, nests, return, `}`, blank.
    while len(out) + 1 < lines:
        body = [f"double f{f}(double *a, double *b, int *ix, int n, int m) {{",
                "  double s = 0;"]
        for k in range(NESTS_PER_FUNCTION):
            if k and len(out) + len(body) + 3 + 1 >= lines:
                break
            body += _nest(rng.choice(_KINDS), k)
            nests += 1
        out += [*body, "  return s;", "}", ""]
        f += 1
    out.append(_MAIN)
    return "\n".join(out) + "\n", nests


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m foresight.bench.gen_nests",
                                description="Write a C file of many two-deep loop nests.")
    p.add_argument("--lines", type=int, default=1000, help="about how many lines (default 1000)")
    p.add_argument("--seed", type=int, default=1, help="the generator's seed (default 1)")
    ns = p.parse_args(argv)
    try:
        text, _ = generate(ns.lines, ns.seed)
    except ValueError as e:
        p.error(f"--lines: {e}")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
