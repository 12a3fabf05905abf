"""Small IR inputs built by hand, for the stage tests (no libclang, no C file).

The fixture `ir` gives builders that read like the C they stand for:

    ir.nest(ir.loop("i", 3, ir.loop("j", 100, ir.ref("A[i][j]", dims=(100,)))))

is `for (i = 0; i < 3; i++) for (j = 0; j < 100; j++) ... A[i][j] ...` over
`double A[..][100]`.  They fill in what the front end would (trip counts, bounds as
symbols and affine functions, byte strides, offsets that nest each loop inside its
parent), so that a test states only the facts it is about.
"""

from __future__ import annotations

import dataclasses
import math
import re
from types import SimpleNamespace

import pytest

from foresight.compiler.analysis.locality import NestFacts, analyse
from foresight.compiler.ir import (
    Affine,
    ArrayRef,
    Loop,
    LoopNest,
    Sym,
    sym_atom,
    sym_const,
    sym_mul,
)
from foresight.compiler.options import CompileOptions
from foresight.compiler.schedule.plan import NestPlan, schedule

Size = int | str   # a constant, or the name of a run-time size


def sym(v: Size) -> Sym:
    return sym_const(v) if isinstance(v, int) else sym_atom(v)


def aff(text: str) -> Affine:
    """An index such as `i`, `j + 1`, `2*i - 1` or `n*i + k`: in each term the last name
    is a loop variable and what multiplies it its coefficient (a number or a size)."""
    out = Affine()
    for sign, term in re.findall(r"([+-]?)\s*([^+-]+)", text):
        factors = [f.strip() for f in term.split("*")]
        k = -1 if sign == "-" else 1
        if all(f.isdigit() for f in factors):
            out = out.plus(Affine({}, sym_const(k * math.prod(int(f) for f in factors))))
            continue
        coeff = sym_const(k)
        for f in factors[:-1]:
            coeff = sym_mul(coeff, sym(int(f) if f.isdigit() else f))
        out = out.plus(Affine({factors[-1]: coeff}))
    return out


def ref(text: str, dims: tuple[Size, ...] = (), elem: int = 8, **fields) -> ArrayRef:
    """`A[i][j]` over an array whose dimensions after the first are `dims` (elements of
    `elem` bytes): the base is the text before the first `[`, each bracket a subscript."""
    base, rest = text.split("[", 1)
    subs = tuple(aff(s) for s in re.findall(r"\[([^\[\]]*)\]", "[" + rest))
    if len(dims) != len(subs) - 1:
        raise ValueError(f"{text}: {len(subs)} subscripts need {len(subs) - 1} dims")
    strides: list[Sym] = [sym_const(elem)]
    for d in reversed(dims):
        strides.insert(0, sym_mul(strides[0], sym(d)))
    return ArrayRef(text=text, line=fields.pop("line", 1), base=base, subscripts=subs,
                    strides=tuple(strides), elem_size=elem,
                    is_write=fields.pop("is_write", False),
                    conditional=fields.pop("conditional", False), **fields)


def row_ref(text: str, elem: int = 8, **fields) -> ArrayRef:
    """`A[i][j]` of `double **A`: the row pointer A[i] is read from memory (a new object
    for every i) and the reference moves along the row with j."""
    rows, row_index, along = re.fullmatch(r"(\w+)\[([^\]]*)\]\[([^\]]*)\]", text).groups()
    index = aff(row_index)
    fields.setdefault("base_rows", (rows, index, 8))
    return ArrayRef(text=text, line=fields.pop("line", 1), base=f"{rows}[{row_index}]",
                    subscripts=(aff(along),), strides=(sym_const(elem),), elem_size=elem,
                    is_write=False, conditional=fields.pop("conditional", False),
                    base_loaded=True, base_loops=tuple(index.coeffs), **fields)


def indirect(text: str, index: ArrayRef, elem: int = 8, **fields) -> ArrayRef:
    """`a[b[i]]` through the index reference `index` (b[i]).  As in the front end, the
    loop body lists `index` itself too (the same object): it is a stream of its own."""
    return ArrayRef(text=text, line=fields.pop("line", 1), base=text.split("[", 1)[0],
                    subscripts=(), strides=(sym_const(elem),), elem_size=elem,
                    is_write=False, conditional=fields.pop("conditional", False),
                    indirect=index, **fields)


def loop(var: str, upper: Size, *body: Loop | ArrayRef, lower: Size = 0, step: int = 1,
         cond: str = "<", **fields) -> Loop:
    """`for (var = lower; var cond upper; var += step)` around `body` (loops and the
    references directly in this loop's body, in source order)."""
    trip = None
    if isinstance(lower, int) and isinstance(upper, int):
        span = (upper - lower + (cond in ("<=", ">="))) * (1 if step > 0 else -1)
        trip = max(0, -(-span // abs(step)))
    values = {
        "lower": str(lower), "upper": str(upper), "cond_op": cond, "step": step,
        "line": 0, "depth": 0, "start": 0, "end": 0, "body_start": 0, "body_end": 0,
        "body_compound": True, "trip": trip,
        "lower_sym": sym(lower), "upper_sym": sym(upper),
        "lower_aff": Affine({}, sym(lower)), "upper_aff": Affine({}, sym(upper)),
        "bounds_invariant": True, "bound_runtime": True, "bound_fixed": True,
        "children": tuple(b for b in body if isinstance(b, Loop)),
        "refs": tuple(b for b in body if isinstance(b, ArrayRef)),
    }
    values.update(fields)
    return Loop(var=var, **values)


# Byte offsets of the loops: the loop at depth d spans [OFFSET*d, END - OFFSET*d), so an
# offset inside(d) falls in the loops of depth <= d only (a store's place, base_writes).
OFFSET, END = 100, 10_000


def inside(depth: int) -> int:
    return OFFSET * depth + OFFSET // 2


def nest(root: Loop, function: str = "f", file: str = "t.c") -> LoopNest:
    """The nest of `root`, with depths, lines (one per loop, in source order) and byte
    offsets filled in."""
    line = 0

    def place(lp: Loop, depth: int) -> Loop:
        nonlocal line
        line += 1
        at = line
        children = tuple(place(ch, depth + 1) for ch in lp.children)
        start, end = OFFSET * depth, END - OFFSET * depth
        return dataclasses.replace(lp, depth=depth, line=at, start=start, end=end,
                                   body_start=start + 10, body_end=end - 10,
                                   children=children)

    return LoopNest(function=function, root=place(root, 0), file=file)


def facts(root: Loop, **opts) -> NestFacts:
    return analyse(nest(root), CompileOptions(**opts))


def plan(root: Loop, **opts) -> NestPlan:
    o = CompileOptions(**opts)
    return schedule(analyse(nest(root), o), o)


@pytest.fixture
def ir() -> SimpleNamespace:
    return SimpleNamespace(aff=aff, ref=ref, row_ref=row_ref, indirect=indirect, loop=loop,
                           nest=nest, inside=inside, facts=facts, plan=plan)
