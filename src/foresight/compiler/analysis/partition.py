"""Array partitioning summaries of statically scheduled parallel loops (paper 4, Section
5.1): facts only.

For a loop under `#pragma omp [parallel] for` whose iterations the OpenMP runtime deals
out statically, each affine reference that the parallel variable v indexes through one
subscript with an integer coefficient c (and no other loop variable in that subscript)
touches, in the iteration with v, one *partitioning unit* of its array: |c| times the
byte stride of that subscript (A[2*j][i] and A[2*j+1][i]: rows 2j and 2j+1 are unit j).
A[j+1][i] beside A[j][i] is the same partition shifted by one unit: the paper's shift
communication.  Arrays referenced in the same loop are used together (its group
access).  Which thread runs which iteration is the schedule's: `static` (or no schedule
clause) gives each thread one contiguous block, `static, c` deals chunks of c round
robin; `dynamic`, `guided`, `runtime` and `auto` decide at run time, so such a loop has
no summary.  A reference the summary cannot describe (indirect, a base read from memory,
v in two subscripts, a symbolic constant in v's subscript that is not a multiple of its
coefficient) leaves its array unsummarised, and says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from foresight.compiler.ir import ArrayRef, Loop, LoopNest, OmpLoop, Sym, sym_str, sym_value


@dataclass(frozen=True)
class PartitionRef:
    """One reference's share of a parallel loop's partition: in the iteration where the
    parallel variable is v, it touches unit `sign`·v + `offset` (+ `shift`) of `base`."""

    text: str
    base: str            # C expression of the array's address
    unit: Sym            # bytes per unit: the stride of the partitioned subscript times
    #                      the magnitude of v's coefficient in it
    offset: Sym          # the symbolic part of that subscript's constant (`n - 1` of n-1-j)
    shift: int           # its numeric part: ±k is shift communication with neighbours
    sign: int            # +1 or -1: the sign of v's coefficient in it
    is_write: bool
    object_bytes: int | None  # the whole array's size, when the source fixes it
    # How an iteration walks the unit, for the cache simulator's model (docs/coloring.md):
    # the innermost loop holding the reference, numbered in source order (preorder) among
    # the parallel loop (0) and the loops inside it; the reference's byte offset inside the
    # unit (x[j][i+1]: +8; x[2*j+1][i]: a row); and the bytes it moves per iteration of that loop
    # (its coefficient times the loop's step, negative when the loop runs down; {}: it
    # stays).
    phase: int = 0
    within: Sym = field(default_factory=dict)
    stride: Sym = field(default_factory=dict)
    also_read: bool = False   # a store that reads the element first (`x[i] += ...`)


@dataclass(frozen=True)
class ParallelLoop:
    """A loop under an OpenMP worksharing directive and what is known of its partition."""

    loop: Loop
    omp: OmpLoop
    refs: tuple[PartitionRef, ...] = ()
    # (reference, why); (None, the front end's problem) for code it did not analyse
    unsummarised: tuple[tuple[str | None, str], ...] = ()
    why: str | None = None   # why the loop has no summary at all (None: it has one)
    # Arrays of a size the source fixes that the loop uses without a summary (a[b[i]]):
    # (base, bytes), declared all the same so their pages count as every thread's.
    others: tuple[tuple[str, int], ...] = ()

    @property
    def cyclic(self) -> bool:
        return self.omp.chunk is not None


_STATIC = (None, "static")
# The worksharing loops a summary may precede: run on the host by the team about to
# share them (target, teams and distribute constructs may run elsewhere).
WORKSHARING = (("for",), ("for", "simd"), ("parallel", "for"), ("parallel", "for", "simd"))


def parallel_loops(nest: LoopNest) -> list[ParallelLoop]:
    """Every worksharing loop of the nest, with its summary or why it has none."""
    out = []
    for lp in nest.loops():
        omp = lp.omp
        if omp is None or "for" not in omp.directive.split():
            continue
        if tuple(omp.directive.split()) not in WORKSHARING:
            out.append(ParallelLoop(lp, omp, why=f"`{omp.directive}`: only `for` and "
                                    "`parallel for` loops are summarised"))
            continue
        out.append(_summarise(nest, lp, omp))
    return out


def _subtree_refs(lp: Loop) -> list[ArrayRef]:
    refs, stack = [], [lp]
    while stack:
        cur = stack.pop()
        refs.extend(cur.refs)
        stack.extend(cur.children)
    return refs


def _holders(lp: Loop) -> list[Loop]:
    """LP and the loops inside it, in source order (preorder)."""
    out, stack = [], [lp]
    while stack:
        cur = stack.pop()
        out.append(cur)
        stack.extend(reversed(cur.children))
    return out


def _walk(p: PartitionRef, r: ArrayRef, holder: Loop, phase: int, lp: Loop) -> PartitionRef:
    """P with how the innermost loop HOLDER walks its unit (see PartitionRef)."""
    d = next(d for d, sub in enumerate(r.subscripts) if sub.coeff(lp.var))
    within = dict(p.within)   # (where the partitioned subscript's coefficient puts it)
    for sub, stride in zip(r.subscripts[d + 1:], r.strides[d + 1:], strict=True):
        k, b = sym_value(sub.const), sym_value(stride)
        within[()] = within.get((), 0) + (k * b if k is not None and b is not None else 0)
    stride = {}
    if holder is not lp and holder.step:   # bytes per iteration: coefficient x step
        stride = {m: holder.step * v for m, v in r.offset.coeff(holder.var).items()}
    return replace(p, phase=phase, within=within, stride=stride, also_read=r.also_read)


def _loop_vars(lp: Loop) -> set[str]:
    out, stack = set(), [lp]
    while stack:
        cur = stack.pop()
        out.add(cur.var)
        stack.extend(cur.children)
    return out


def _summarise(nest: LoopNest, lp: Loop, omp: OmpLoop) -> ParallelLoop:
    if nest.uneditable:
        return ParallelLoop(lp, omp, why=f"the nest is left unchanged: {nest.uneditable}")
    if omp.schedule not in _STATIC:
        return ParallelLoop(lp, omp, why=f"schedule({omp.schedule}) assigns iterations at "
                            "run time: no static partition to summarise")
    if omp.collapse != 1:
        clause = next((c for c in omp.clauses if c.startswith("collapse")), "collapse")
        return ParallelLoop(lp, omp, why=f"{clause}: a partition of the collapsed "
                            "iteration space is not summarised")
    if lp.step not in (1, -1) or lp.lower is None or lp.upper is None or \
            lp.cond_op not in ("<", "<=", ">", ">=") or \
            (lp.step > 0) != (lp.cond_op in ("<", "<=")):
        return ParallelLoop(lp, omp, why="the loop does not count by one towards a < <= > >= "
                            "bound: its iterations' units are not summarised")
    if not lp.bounds_invariant:
        return ParallelLoop(lp, omp, why="its bounds cannot be evaluated before the loop")
    inner = _loop_vars(lp) - {lp.var}
    refs, unsummarised = [], []
    stack = [lp]
    while stack:   # references the front end could not analyse at all
        cur = stack.pop()
        unsummarised += [(None, p) for p in cur.problems]
        stack.extend(cur.children)
    for phase, holder in enumerate(_holders(lp)):
        for r in holder.refs:
            found = _partition_ref(r, lp, inner)
            if isinstance(found, str):
                unsummarised.append((r.text, found))
            else:
                refs.append(_walk(found, r, holder, phase, lp))
    # An array with one unsummarised reference is unsummarised: its pages' processors are
    # not all known.
    bad = {r.base for r in _subtree_refs(lp)
           if any(text == r.text for text, _ in unsummarised)}
    kept = tuple(p for p in refs if p.base not in bad)
    if not kept:
        return ParallelLoop(lp, omp, (), tuple(unsummarised),
                            why="no reference the parallel variable partitions")
    others = {r.base: r.object_bytes for r in _subtree_refs(lp)
              if r.base in bad and not r.base_loaded and r.object_bytes is not None
              and r.base_decl is not None and r.base_decl < lp.start}
    return ParallelLoop(lp, omp, kept, tuple(unsummarised), others=tuple(others.items()))


def _partition_ref(r: ArrayRef, lp: Loop, inner: set[str]) -> PartitionRef | str:
    v = lp.var
    if r.indirect is not None:
        return "indirect: which pages each thread touches is not known before the loop"
    if r.base_loaded:
        return f"its base {r.base} is read from memory"
    if r.base_decl is None or r.base_decl >= lp.start:
        return f"its base {r.base} is not declared before the loop"
    if len(r.subscripts) != len(r.strides) or not r.subscripts:
        return "not an array subscript"
    dims = [d for d, sub in enumerate(r.subscripts) if sub.coeff(v)]
    if not dims:
        return f"{v} does not index it: every thread touches all of it"
    if len(dims) > 1:
        return f"{v} indexes more than one of its subscripts"
    d = dims[0]
    sub = r.subscripts[d]
    coeff = sym_value(sub.coeff(v))
    if coeff is None or coeff == 0:
        return f"{v}'s coefficient in its subscript is not a number"
    if any(var != v for var in sub.coeffs):
        return f"another loop variable shares {v}'s subscript"
    # With coefficient c (a[2*v + 1]), iteration v touches unit v of |c| subscripts'
    # strides, at (constant mod |c|) strides into it.
    c = abs(coeff)
    shift, inside = divmod(sub.const.get((), 0), c)
    if any(k % c for atoms, k in sub.const.items() if atoms):
        return (f"its subscript of {v} adds {sym_str({a: k for a, k in sub.const.items() if a})}"
                f", not a multiple of {v}'s coefficient {coeff}")
    offset = {atoms: k // c for atoms, k in sub.const.items() if atoms}
    names = {a for atoms in offset for a in atoms}
    bounds = " ".join(t for t in (lp.lower, lp.upper) if t)
    if any(not a.isidentifier() or not re.search(rf"\b{re.escape(a)}\b", bounds)
           for a in names):
        # Evaluated before the loop: only names its bounds use are known to be in scope.
        return (f"its subscript of {v} adds {sym_str(offset)}, which the loop's bounds "
                "do not name")
    if any(outer.coeffs or sym_value(outer.const) != 0 for outer in r.subscripts[:d]):
        # A[k][j][i] with j parallel: a strip of every plane per thread, not one range.
        return f"{v} partitions an inner dimension while an outer subscript is not 0"
    return PartitionRef(text=r.text, base=r.base,
                        unit={m: c * k for m, k in r.strides[d].items()}, offset=offset,
                        shift=shift, sign=1 if coeff > 0 else -1, is_write=r.is_write,
                        object_bytes=r.object_bytes,
                        within={m: inside * k for m, k in r.strides[d].items()} if inside
                        else {})
